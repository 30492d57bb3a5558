// Every chunk id of the namespace, in a fixed order; the N/A calibration then
// takes them in the order of a seeded hash of each id (a consistent sample).
MATCH (c:Chunk {namespace: $namespace})
RETURN c.id AS chunk_id
ORDER BY chunk_id

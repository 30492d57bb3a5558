// Every chunk id of the namespace. No ORDER BY: the N/A calibration takes them
// in the order of a seeded hash of each id (a consistent sample), whatever order
// they come in.
MATCH (c:Chunk {namespace: $namespace})
RETURN c.id AS chunk_id

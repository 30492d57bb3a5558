// Every chunk id of the namespace, in a fixed order, so the N/A calibration can
// draw the same seeded sample of chunks every time.
MATCH (c:Chunk {namespace: $namespace})
RETURN c.id AS chunk_id
ORDER BY chunk_id

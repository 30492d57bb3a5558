// Which of these chunks may join the chunk network (ingested, with a GSW).
// $ids: [chunk id]
UNWIND $ids AS chunk_id
MATCH (c:Chunk {namespace: $namespace, id: chunk_id})
WHERE c.status = 'done'
RETURN c.id AS id

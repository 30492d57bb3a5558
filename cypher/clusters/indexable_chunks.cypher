// Which of these chunks may be linked to by the chunks being indexed: ingested
// with a GSW, and already in the chunk network (indexed by the stage) or in the
// batch itself. $ids: [chunk id], $marker: the stage marker, $batch: [chunk id]
UNWIND $ids AS chunk_id
MATCH (c:Chunk {namespace: $namespace, id: chunk_id})
WHERE c.status = 'done' AND ($marker IN coalesce(c.stages, []) OR c.id IN $batch)
RETURN c.id AS id

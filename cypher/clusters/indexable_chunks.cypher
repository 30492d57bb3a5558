// Which of these chunks may join the chunk network: ingested with a GSW. `indexed`
// says whether the stage has indexed the chunk already (the caller also accepts
// the chunks of the batch being indexed). $ids: [chunk id], $marker: the stage marker
UNWIND $ids AS chunk_id
MATCH (c:Chunk {namespace: $namespace, id: chunk_id})
WHERE c.status = 'done'
RETURN c.id AS id, $marker IN coalesce(c.stages, []) AS indexed

// Chunks taken out of the hierarchy without being deleted: they no longer count
// as indexed by the stage (the next run adds them again). $ids: [chunk id], $stage
UNWIND $ids AS chunk_id
MATCH (c:Chunk {namespace: $namespace, id: chunk_id})
SET c.stages = [m IN coalesce(c.stages, []) WHERE NOT m STARTS WITH $stage + '@']

// Record that a memory stage indexed these chunks: replace any older marker of
// the same stage ("<stage>@...") by "<stage>@<version>".
UNWIND $chunk_ids AS chunk_id
MATCH (c:Chunk {namespace: $namespace, id: chunk_id})
SET c.stages = [m IN coalesce(c.stages, []) WHERE NOT m STARTS WITH $stage + '@'] + [$marker]

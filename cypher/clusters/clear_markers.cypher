// Rebuild from scratch, last step: no chunk counts as indexed by the stage any more.
// $stage: the stage name (markers are "<stage>@<version>")
MATCH (c:Chunk {namespace: $namespace})
WHERE any(m IN coalesce(c.stages, []) WHERE m STARTS WITH $stage + '@')
SET c.stages = [m IN c.stages WHERE NOT m STARTS WITH $stage + '@']

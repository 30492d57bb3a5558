// How many chunks of the namespace carry a marker of this stage from another
// version ("<stage>@<old version>"): memory an earlier version of the stage built.
// $stage: the stage name; $marker: the current "<stage>@<version>"
MATCH (c:Chunk {namespace: $namespace})
WHERE any(m IN coalesce(c.stages, []) WHERE m STARTS WITH $stage + '@' AND m <> $marker)
RETURN count(c) AS stale

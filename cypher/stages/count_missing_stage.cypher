// How many indexable chunks of the namespace lack a memory stage's marker.
MATCH (c:Chunk {namespace: $namespace})
WHERE c.status = 'done' AND NOT $marker IN coalesce(c.stages, [])
RETURN count(c) AS missing

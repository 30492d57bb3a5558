// Chunks of the namespace that a memory stage has not indexed yet (no marker
// "<stage>@<version>" in c.stages), oldest documents first, at most $limit.
// Failed chunks have no GSW and are skipped.
MATCH (c:Chunk {namespace: $namespace})
WHERE c.status = 'done' AND NOT $marker IN coalesce(c.stages, [])
RETURN c.id AS id, c.doc_id AS doc_id, coalesce(c.title, '') AS title, c.text AS text, c.position AS position
ORDER BY c.doc_id, c.position
LIMIT $limit

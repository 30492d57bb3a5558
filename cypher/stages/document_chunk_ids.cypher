// The chunk ids of one document (what a stage must forget when it is deleted).
MATCH (c:Chunk {namespace: $namespace, doc_id: $doc_id})
RETURN c.id AS id ORDER BY c.position

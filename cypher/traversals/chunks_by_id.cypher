// Passages by chunk id, in the order given (dense passage search results).
UNWIND range(0, size($ids) - 1) AS i
MATCH (c:Chunk {namespace: $namespace, id: $ids[i]})
RETURN i, c.id AS chunk_id, c.doc_id AS doc_id, c.title AS title, c.text AS text
ORDER BY i

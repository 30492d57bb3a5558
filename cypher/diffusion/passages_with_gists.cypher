// Passages by chunk id, in the order given, each with its gist when the gists stage wrote one.
UNWIND range(0, size($ids) - 1) AS i
MATCH (c:Chunk {namespace: $namespace, id: $ids[i]})
OPTIONAL MATCH (c)-[:HAS_GIST]->(g:Gist {namespace: $namespace})
RETURN i, c.id AS chunk_id, c.doc_id AS doc_id, c.title AS title, c.text AS text,
       g.id AS gist_id, g.text AS gist_text, g.method AS gist_method
ORDER BY i

// Passages by chunk id, in the order given, each with its document (for
// citations) and its gist when the gists stage wrote one. One read gives the
// diffusion strategy all the text and provenance it returns.
UNWIND range(0, size($ids) - 1) AS i
MATCH (d:Document {namespace: $namespace})-[:HAS_CHUNK]->(c:Chunk {namespace: $namespace, id: $ids[i]})
OPTIONAL MATCH (c)-[:HAS_GIST]->(g:Gist {namespace: $namespace})
RETURN i, c.id AS chunk_id, d.id AS doc_id, c.title AS title, c.text AS text,
       d.title AS doc_title, d.source AS source,
       g.id AS gist_id, g.text AS gist_text, g.method AS gist_method
ORDER BY i

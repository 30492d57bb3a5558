// Passages by chunk id, in the order given (dense passage search results), each with its
// document's title and source so that citing them needs no second read.
UNWIND range(0, size($ids) - 1) AS i
MATCH (d:Document {namespace: $namespace})-[:HAS_CHUNK]->(c:Chunk {namespace: $namespace, id: $ids[i]})
RETURN i, c.id AS chunk_id, c.doc_id AS doc_id, c.title AS title, c.text AS text,
       d.title AS doc_title, d.source AS source
ORDER BY i

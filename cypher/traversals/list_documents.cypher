// Documents of the namespace, optionally only those of one status ($status null = all),
// ordered by id, at most $limit (`engramdb documents`, Memory.documents).
// Ingest stores chunk and QA counts when it settles a document; a document still
// 'pending' has none stored yet, so they are counted from the graph instead.
MATCH (d:Document {namespace: $namespace})
WHERE $status IS NULL OR d.status = $status
RETURN d.id AS id, d.title AS title, d.status AS status,
       coalesce(d.chunk_count, COUNT { (d)-[:HAS_CHUNK]->(:Chunk) }) AS chunks,
       coalesce(d.qa_count, COUNT {
         MATCH (d)-[:HAS_CHUNK]->(:Chunk)-[:HAS_VERB_PHRASE]->(:VerbPhrase)-[q:QA]->()
         RETURN DISTINCT q.id
       }) AS qa_pairs,
       d.error AS error
ORDER BY id
LIMIT $limit

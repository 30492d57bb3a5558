// Chunks of documents, linked from their Document. A failed chunk keeps its
// reason in `error` and gets no entities, verb phrases or QA edges.
// `namespace_key` (the namespace as one word, see upsert_documents) lets keyword
// search filter by namespace inside the full-text index.
// $rows: [{id, doc_id, title, position, text, content_hash, status, error}]
UNWIND $rows AS row
MATCH (d:Document {namespace: $namespace, id: row.doc_id})
MERGE (c:Chunk {namespace: $namespace, id: row.id})
SET c.doc_id = row.doc_id,
    c.title = row.title,
    c.position = row.position,
    c.text = row.text,
    c.content_hash = row.content_hash,
    c.status = row.status,
    c.error = row.error,
    c.namespace_key = d.namespace_key
MERGE (d)-[h:HAS_CHUNK]->(c)
SET h.namespace = $namespace

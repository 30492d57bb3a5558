// Documents of the namespace by id: status and content hash (resume / skip logic), and the writer
// holding a live claim on it, if any (writers/claim_documents).
UNWIND $ids AS doc_id
MATCH (d:Document {namespace: $namespace, id: doc_id})
RETURN d.id AS id, d.title AS title, d.status AS status, d.content_hash AS content_hash, d.error AS error,
       d.ingest_version AS ingest_version, d.path AS path, d.source AS source,
       CASE WHEN d.claim_until > timestamp() THEN d.claimed_by END AS claimed_by

// Documents of the namespace by id: status and content hash (resume / skip logic).
UNWIND $ids AS doc_id
MATCH (d:Document {namespace: $namespace, id: doc_id})
RETURN d.id AS id, d.title AS title, d.status AS status, d.content_hash AS content_hash, d.error AS error,
       d.ingest_version AS ingest_version, d.path AS path, d.source AS source

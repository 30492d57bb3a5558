// Documents of the namespace with their ingest status and size (their ids are what the document queries take).
MATCH (d:Document {namespace: $namespace})
RETURN d.id AS id, d.title AS title, d.status AS status, d.chunk_count AS chunks, d.qa_count AS qa_pairs, d.error AS error
ORDER BY d.title, d.id
LIMIT 100

// Documents of a namespace with their ingest status and size.
MATCH (d:Document {namespace: $namespace})
RETURN d.id AS id, d.title AS title, d.status AS status, d.chunk_count AS chunks, d.qa_count AS qa_pairs, d.error AS error
ORDER BY d.title
LIMIT 100

// One document of the namespace with its passages in order (Memory.document: MCP document
// resources and GET /v1/namespaces/{namespace}/documents/{id}). No row when the id is unknown.
MATCH (d:Document {namespace: $namespace, id: $doc_id})
OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk)
WITH d, c
ORDER BY c.position
WITH d, [x IN collect(c) | {title: x.title, text: x.text}] AS passages
RETURN d.id AS id, d.title AS title, d.status AS status, d.source AS source, passages

// Chunk positions of some documents (for the proximity term between chunks of
// one document). $doc_ids: [document id]
UNWIND $doc_ids AS doc_id
MATCH (:Document {namespace: $namespace, id: doc_id})-[:HAS_CHUNK]->(c:Chunk {namespace: $namespace})
WHERE c.status = 'done'
RETURN c.id AS id, c.doc_id AS doc_id, c.position AS position

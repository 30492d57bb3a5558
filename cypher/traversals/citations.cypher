// Citations: chunk → document for the chunks that evidence QA pairs came from.
UNWIND $chunk_ids AS chunk_id
MATCH (d:Document {namespace: $namespace})-[:HAS_CHUNK]->(c:Chunk {namespace: $namespace, id: chunk_id})
RETURN c.id AS chunk_id, c.position AS position, d.id AS doc_id, d.title AS title, d.source AS source

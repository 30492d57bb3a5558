// Chunks that mention the given entities (at most $per_entity per entity), with
// the entities each one mentions among them: the passages of retrieved entities.
UNWIND $entity_ids AS entity_id
CALL (entity_id) {
  MATCH (c:Chunk {namespace: $namespace})-[:MENTIONS]->(:Entity {namespace: $namespace, id: entity_id})
  RETURN c
  LIMIT $per_entity
}
WITH c, collect(DISTINCT entity_id) AS entity_ids
RETURN c.id AS chunk_id, c.doc_id AS doc_id, c.title AS title, c.text AS text, entity_ids
ORDER BY chunk_id

// For each given entity, QA pairs that ask about it (the second hop of a
// two-hop calibration probe), with their answers; at most $per_entity each.
UNWIND $entity_ids AS entity_id
CALL (entity_id) {
  MATCH (:Entity {namespace: $namespace, id: entity_id})-[:ROLE_IN]->(:VerbPhrase)-[q:QA]->(a:Entity)
  WHERE entity_id IN q.question_entity_ids
  WITH q.id AS qa_id, q.question AS question, collect(a.id) AS answer_ids, collect(a.name) AS answer_names,
       collect(a.type) AS answer_types
  RETURN qa_id, question, answer_ids, answer_names, answer_types
  ORDER BY qa_id
  LIMIT $per_entity
}
RETURN entity_id, qa_id, question, answer_ids, answer_names, answer_types

// QA pairs around entities, in both directions, for direction-aware hops:
// side "forward": pairs that ask about the entity (one of their question
// entities); side "reverse" (only for the ids in $reverse_ids): pairs that answer with it.
// At most $per_entity pairs per entity and side, so one very common entity
// cannot crowd out the others.
UNWIND $entity_ids AS entity_id
CALL (entity_id) {
  MATCH (:Entity {namespace: $namespace, id: entity_id})-[:ROLE_IN]->(v:VerbPhrase)-[q:QA]->(a:Entity)
  WHERE entity_id IN q.question_entity_ids
  WITH v, q.id AS qa_id, q.question AS question, q.doc_id AS doc_id, q.chunk_id AS chunk_id,
       q.question_entity_ids AS question_entity_ids, collect(a) AS answers
  RETURN v, qa_id, question, doc_id, chunk_id, question_entity_ids, answers, 'forward' AS side
  LIMIT $per_entity
  UNION
  WITH entity_id
  WHERE entity_id IN $reverse_ids
  MATCH (v:VerbPhrase)-[answered:QA]->(:Entity {namespace: $namespace, id: entity_id})
  WHERE NOT entity_id IN answered.question_entity_ids
  MATCH (v)-[q:QA {id: answered.id}]->(a:Entity)
  WITH v, q.id AS qa_id, q.question AS question, q.doc_id AS doc_id, q.chunk_id AS chunk_id,
       q.question_entity_ids AS question_entity_ids, collect(a) AS answers
  RETURN v, qa_id, question, doc_id, chunk_id, question_entity_ids, answers, 'reverse' AS side
  LIMIT $per_entity
}
RETURN qa_id, question, v.text AS verb_phrase, v.id AS verb_phrase_id, doc_id, chunk_id, question_entity_ids,
       [a IN answers | a.id] AS answer_ids, [a IN answers | a.name] AS answer_names,
       [a IN answers | a.type] AS answer_types, entity_id AS via_entity, side
LIMIT $limit

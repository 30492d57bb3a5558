// QA pairs whose question names one of the given entities (the QA pairs
// "attached" to an entity), with their answers, verb phrase and provenance.
// At most $per_entity QA pairs per entity, so one very common entity cannot
// crowd out the others.
UNWIND $entity_ids AS entity_id
CALL (entity_id) {
  MATCH (e:Entity {namespace: $namespace, id: entity_id})-[:ROLE_IN]->(v:VerbPhrase)-[q:QA]->(a:Entity)
  WHERE entity_id IN q.question_entity_ids
  WITH v, q.id AS qa_id, q.question AS question, q.doc_id AS doc_id, q.chunk_id AS chunk_id,
       q.question_entity_ids AS question_entity_ids, collect(a) AS answers
  RETURN v.text AS verb_phrase, qa_id, question, doc_id, chunk_id, question_entity_ids, answers
  LIMIT $per_entity
}
RETURN qa_id, question, verb_phrase, doc_id, chunk_id, question_entity_ids,
       [a IN answers | a.id] AS answer_ids, [a IN answers | a.name] AS answer_names,
       [a IN answers | a.type] AS answer_types, entity_id AS via_entity
LIMIT $limit

// The QA pairs of the given chunks with the names of the entities they ask about,
// from which the N/A calibration rebuilds questions (answerable as stored, or
// with the asked-about name replaced by an invented one).
UNWIND $chunk_ids AS chunk_id
MATCH (:Chunk {namespace: $namespace, id: chunk_id})-[:HAS_VERB_PHRASE]->(v:VerbPhrase)-[q:QA]->(a:Entity)
WITH chunk_id, q.id AS qa_id, q.question AS question, q.question_entity_ids AS question_entity_ids,
     collect(a) AS answers
CALL (question_entity_ids) {
  UNWIND question_entity_ids AS entity_id
  MATCH (e:Entity {namespace: $namespace, id: entity_id})
  RETURN collect(e.name) AS question_entity_names
}
RETURN chunk_id, qa_id, question, question_entity_ids, question_entity_names,
       [a IN answers | a.id] AS answer_ids, [a IN answers | a.name] AS answer_names,
       [a IN answers | a.type] AS answer_types
ORDER BY chunk_id, qa_id

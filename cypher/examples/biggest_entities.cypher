// The biggest entities: the most QA pairs asked about them or answered by them, and how many documents mention them.
MATCH (e:Entity {namespace: $namespace})
CALL (e) {
  OPTIONAL MATCH (e)-[:ROLE_IN]->(:VerbPhrase)-[q:QA]->(:Entity)
  WHERE e.id IN q.question_entity_ids
  RETURN count(DISTINCT q.id) AS asked_about
}
CALL (e) {
  OPTIONAL MATCH (:VerbPhrase)-[q:QA]->(e)
  RETURN count(DISTINCT q.id) AS answer_to
}
CALL (e) {
  OPTIONAL MATCH (:Chunk)-[m:MENTIONS]->(e)
  RETURN count(DISTINCT m.doc_id) AS documents
}
RETURN e.name AS entity, e.type AS type, asked_about + answer_to AS qa_pairs, asked_about, answer_to, documents
ORDER BY qa_pairs DESC, documents DESC, entity
LIMIT 25

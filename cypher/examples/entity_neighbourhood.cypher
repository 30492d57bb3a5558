// An entity's QA neighbourhood across documents: every QA pair that asks about it or is answered by it, with the other entity and the document; one row per QA edge.
// :param name => 'American Psychological Association'
MATCH (e:Entity {namespace: $namespace})
WHERE toLower(e.name) = toLower($name)
CALL (e) {
  MATCH (e)-[:ROLE_IN]->(:VerbPhrase)-[q:QA]->(other:Entity)
  WHERE e.id IN q.question_entity_ids
  RETURN 'asked about' AS role, q, other
  UNION
  MATCH (v:VerbPhrase)-[q:QA]->(e)
  RETURN 'answer' AS role, q, [(x:Entity)-[:ROLE_IN]->(v) WHERE x.id IN q.question_entity_ids | x][0] AS other
}
OPTIONAL MATCH (d:Document {namespace: $namespace, id: q.doc_id})
RETURN e.name AS entity, role, q.question AS question, other.name AS other_entity, d.title AS document,
       q.doc_id AS doc_id
ORDER BY document, role, question
LIMIT 200

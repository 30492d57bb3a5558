// Every QA pair that asks about an entity (found by name, case-insensitive), with its answer and document.
// :param name => 'American Psychological Association'
MATCH (e:Entity {namespace: $namespace})
WHERE toLower(e.name) = toLower($name)
MATCH (e)-[:ROLE_IN]->(v:VerbPhrase)-[q:QA]->(answer:Entity)
WHERE e.id IN q.question_entity_ids
RETURN e.name AS entity, q.question AS question, answer.name AS answer, v.doc_id AS document
ORDER BY question, answer
LIMIT 200

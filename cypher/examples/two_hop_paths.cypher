// Two-hop reasoning paths from an entity, as chain search walks them: a QA pair about the entity answered by a second entity, then a QA pair about that one answered by a third (all three different).
// :param name => 'Journal of Psychotherapy Integration'
MATCH (start:Entity {namespace: $namespace})
WHERE toLower(start.name) = toLower($name)
MATCH path = (start)-[:ROLE_IN]->(:VerbPhrase)-[q1:QA]->(middle:Entity)-[:ROLE_IN]->(:VerbPhrase)-[q2:QA]->(last:Entity)
WHERE start.id IN q1.question_entity_ids AND middle.id IN q2.question_entity_ids
  AND middle <> start AND last <> start AND last <> middle
RETURN start.name AS start, q1.question AS first_hop, middle.name AS middle, q2.question AS second_hop,
       last.name AS reaches, path
ORDER BY middle, reaches
LIMIT 25

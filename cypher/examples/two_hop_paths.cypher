// Two-hop reasoning paths through QA edges starting at an entity: what chain search walks.
// :param entity_id => 'ent-...'
MATCH p = (:Entity {namespace: $namespace, id: $entity_id})-[:ROLE_IN]->(:VerbPhrase)-[:QA]->(mid:Entity)
          -[:ROLE_IN]->(:VerbPhrase)-[:QA]->(:Entity)
RETURN p
LIMIT 25

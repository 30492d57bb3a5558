// Names and types of entities by id (to show question entities of QA pairs).
UNWIND $ids AS entity_id
MATCH (e:Entity {namespace: $namespace, id: entity_id})
RETURN e.id AS id, e.name AS name, e.type AS type

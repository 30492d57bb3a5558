// Existing entities for normalized names (entity reconciliation at ingest).
UNWIND $keys AS key
MATCH (e:Entity {namespace: $namespace, normalized_name: key})
RETURN key, e.id AS id

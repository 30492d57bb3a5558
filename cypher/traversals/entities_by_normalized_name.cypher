// Existing entities for normalized names (entity reconciliation at ingest), with
// the types they were mentioned as (reconciliation never joins clearly different kinds).
UNWIND $keys AS key
MATCH (e:Entity {namespace: $namespace, normalized_name: key})
RETURN key, e.id AS id, CASE WHEN size(coalesce(e.types, [])) > 0 THEN e.types ELSE [e.type] END AS types

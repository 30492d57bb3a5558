// Existing entities that were mentioned under one of the given normalized
// names (entity reconciliation for names that are not a node's own name),
// with the types they were mentioned as. A node's alias keys hold its own name
// too; `own_name` says so, as the name lookup may have run before the node existed
// (another writer committed it in between) and an own name is never a mere alias.
MATCH (e:Entity {namespace: $namespace})
WHERE e.alias_keys IS NOT NULL AND any(k IN e.alias_keys WHERE k IN $keys)
UNWIND [k IN e.alias_keys WHERE k IN $keys] AS key
RETURN key, e.id AS id, CASE WHEN size(coalesce(e.types, [])) > 0 THEN e.types ELSE [e.type] END AS types,
       e.normalized_name = key AS own_name

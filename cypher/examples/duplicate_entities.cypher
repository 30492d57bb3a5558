// Duplicate-entity check: entities that share a normalized name or alias but were kept apart by reconciliation (different types, or an alias several entities use); one row per shared key.
MATCH (e:Entity {namespace: $namespace})
UNWIND e.alias_keys AS key
WITH key, collect(DISTINCT e) AS entities
WHERE size(entities) > 1
RETURN key, size(entities) AS count,
       [x IN entities | x.name + ' (' + coalesce(x.type, '?') + ')'] AS entities,
       [x IN entities | x.id] AS ids,
       [x IN entities | COUNT { (:Chunk)-[:MENTIONS]->(x) }] AS mentions
ORDER BY count DESC, key
LIMIT 100

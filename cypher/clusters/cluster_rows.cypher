// Every live cluster of the namespace with its members (tests, benchmarks, export).
MATCH (k:Cluster {namespace: $namespace})
WHERE NOT coalesce(k.dissolved, false)
OPTIONAL MATCH (k)-[:HAS_MEMBER]->(m)
WITH k, collect(m.id) AS members
RETURN k.id AS id, k.level AS level, k.title AS title, k.summary AS summary, k.revision AS revision,
       k.sources AS sources, members
ORDER BY k.level, k.id

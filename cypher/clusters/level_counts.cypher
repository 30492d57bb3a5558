// The shape of the hierarchy: clusters and member edges per level, and how many
// clusters are roots (no cluster above them).
MATCH (k:Cluster {namespace: $namespace})
WHERE NOT coalesce(k.dissolved, false)
OPTIONAL MATCH (p:Cluster {namespace: $namespace})-[:HAS_MEMBER]->(k)
WITH k, count(p) AS parents
RETURN k.level AS level, count(k) AS clusters, sum(k.size) AS members,
       sum(CASE WHEN parents = 0 THEN 1 ELSE 0 END) AS roots
ORDER BY level

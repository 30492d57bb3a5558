// The biggest clusters of each level with their title and summary.
MATCH (k:Cluster {namespace: $namespace})
WHERE NOT coalesce(k.dissolved, false)
RETURN k.level AS level, k.size AS members, k.title AS title, k.summary AS summary
ORDER BY level DESC, members DESC
LIMIT 50

// The biggest clusters (CAM) of each level, top level first: members, title and summary.
MATCH (k:Cluster {namespace: $namespace})
WHERE NOT coalesce(k.dissolved, false)
RETURN k.level AS level, COUNT { (k)-[:HAS_MEMBER]->() } AS members, k.title AS title, k.summary AS summary,
       k.id AS id
ORDER BY level DESC, members DESC, title
LIMIT 50

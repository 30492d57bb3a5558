// A chunk's clusters, level by level up to the top (CAM's memory overlaps: a chunk can sit in several clusters, so there can be several paths); one row per path from the chunk to a root cluster.
// :param chunk_id => 'doc-aba73115c7ced3a0e7da#0'
MATCH path = (top:Cluster {namespace: $namespace})-[:HAS_MEMBER*1..12]->(c:Chunk {namespace: $namespace, id: $chunk_id})
WHERE NOT coalesce(top.dissolved, false)
  AND NOT EXISTS {
    MATCH (parent:Cluster {namespace: $namespace})-[:HAS_MEMBER]->(top)
    WHERE NOT coalesce(parent.dissolved, false)
  }
  AND none(k IN nodes(path) WHERE k:Cluster AND coalesce(k.dissolved, false))
RETURN c.title AS chunk, top.level AS top_level,
       [k IN reverse(nodes(path)) WHERE k:Cluster | 'L' + toString(k.level) + ' ' + k.title] AS clusters_upwards,
       path
ORDER BY top_level DESC, clusters_upwards
LIMIT 25

// Which of these cluster ids exist (and are not dissolved), with their level.
// $ids: [cluster id]
UNWIND $ids AS cluster_id
MATCH (k:Cluster {namespace: $namespace, id: cluster_id})
RETURN k.id AS id, k.level AS level, coalesce(k.dissolved, false) AS dissolved

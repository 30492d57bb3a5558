// Which of these cluster ids exist, with their level, whether they are dissolved,
// and what their summary was written from (`basis`: a hash of the members it rests on).
// $ids: [cluster id]
UNWIND $ids AS cluster_id
MATCH (k:Cluster {namespace: $namespace, id: cluster_id})
RETURN k.id AS id, k.level AS level, coalesce(k.dissolved, false) AS dissolved, k.basis AS basis,
       k.summary AS summary, k.revision AS revision, k.sources AS sources

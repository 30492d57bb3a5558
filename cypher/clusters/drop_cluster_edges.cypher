// A cluster whose summary changed is re-linked from scratch: drop its SIMILAR links first.
// $ids: [cluster id]
UNWIND $ids AS cluster_id
MATCH (k:Cluster {namespace: $namespace, id: cluster_id})-[s:SIMILAR {namespace: $namespace}]-()
DELETE s

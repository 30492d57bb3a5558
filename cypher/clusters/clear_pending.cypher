// The level above has taken these clusters' changes into account. $ids: [cluster id]
UNWIND $ids AS cluster_id
MATCH (k:Cluster {namespace: $namespace, id: cluster_id})
SET k.pending = false

// Delete clusters with their replicas, links and member edges. $ids: [cluster id]
UNWIND $ids AS cluster_id
MATCH (k:Cluster {namespace: $namespace, id: cluster_id})
CALL (k) {
  MATCH (k)<-[:REPLICA_OF]-(r:Replica {namespace: $namespace})
  DETACH DELETE r
}
DETACH DELETE k

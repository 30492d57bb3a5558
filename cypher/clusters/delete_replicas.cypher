// Forget the replicas of some nodes of one level (they are rewritten right after,
// in the same transaction). $level: int, $ids: [node id]
UNWIND $ids AS node_id
OPTIONAL MATCH (c:Chunk {namespace: $namespace, id: node_id}) WHERE $level = 0
OPTIONAL MATCH (k:Cluster {namespace: $namespace, id: node_id}) WHERE $level > 0
WITH coalesce(c, k) AS n
WHERE n IS NOT NULL
MATCH (n)<-[:REPLICA_OF]-(r:Replica {namespace: $namespace})
DETACH DELETE r

// Replicas of nodes of one level: (:Replica {label, members})-[:REPLICA_OF]->(node).
// `members` are the neighbours in the ego-network component the replica stands
// for; `label` is the id of the cluster one level up that the replica belongs to.
// $level: int, $rows: [{id, node_id, label, members}]
UNWIND $rows AS row
OPTIONAL MATCH (c:Chunk {namespace: $namespace, id: row.node_id}) WHERE $level = 0
OPTIONAL MATCH (k:Cluster {namespace: $namespace, id: row.node_id}) WHERE $level > 0
WITH row, coalesce(c, k) AS n
WHERE n IS NOT NULL
CREATE (r:Replica {namespace: $namespace, id: row.id, level: $level, node_id: row.node_id,
                   label: row.label, members: row.members})
CREATE (r)-[:REPLICA_OF {namespace: $namespace}]->(n)

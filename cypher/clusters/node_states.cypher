// The clustering state of some nodes of one level: their weighted SIMILAR links
// and their replicas (one per connected component of the node's ego network).
// Level 0 nodes are chunks, higher levels are clusters of that level. Links come
// as [neighbour id, weight] and replicas as [id, label, members]: lists, not maps,
// because decoding map keys was a good part of reading a whole neighbourhood.
// $level: int, $ids: [node id]
UNWIND $ids AS node_id
OPTIONAL MATCH (c:Chunk {namespace: $namespace, id: node_id}) WHERE $level = 0
OPTIONAL MATCH (k:Cluster {namespace: $namespace, id: node_id}) WHERE $level > 0 AND k.level = $level
WITH coalesce(c, k) AS n
WHERE n IS NOT NULL
CALL (n) {
  OPTIONAL MATCH (n)-[s:SIMILAR {namespace: $namespace}]-(o)
  RETURN collect(CASE WHEN o IS NULL THEN NULL ELSE [o.id, s.weight] END) AS neighbours
}
CALL (n) {
  OPTIONAL MATCH (n)<-[:REPLICA_OF]-(r:Replica {namespace: $namespace})
  RETURN collect(CASE WHEN r IS NULL THEN NULL ELSE [r.id, r.label, r.members] END) AS replicas
}
RETURN n.id AS id, neighbours, replicas

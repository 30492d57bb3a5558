// Invariants of the cluster hierarchy of a namespace (tests, benchmarks, analysts):
// chunks of the stage not reachable from a root cluster, member edges that skip
// a level or point outside the namespace, clusters without enough members,
// dissolved or pending leftovers, and chunks in more than one level-1 cluster.
// $marker: the stage marker ("clusters@<version>").
CALL () {
  MATCH (c:Chunk {namespace: $namespace})
  WHERE $marker IN coalesce(c.stages, [])
  WITH c, EXISTS {
    MATCH (root:Cluster {namespace: $namespace})-[:HAS_MEMBER*1..12]->(c)
    WHERE NOT EXISTS { MATCH (:Cluster {namespace: $namespace})-[:HAS_MEMBER]->(root) }
  } AS reachable
  RETURN count(c) AS chunks, sum(CASE WHEN reachable THEN 0 ELSE 1 END) AS unreachable_chunks
}
CALL () {
  MATCH (k:Cluster {namespace: $namespace})-[:HAS_MEMBER]->(m)
  WHERE m.namespace <> $namespace
     OR (k.level = 1 AND NOT m:Chunk)
     OR (k.level > 1 AND NOT (m:Cluster AND m.level = k.level - 1 AND NOT coalesce(m.dissolved, false)))
  RETURN count(*) AS bad_member_edges
}
CALL () {
  MATCH (k:Cluster {namespace: $namespace})
  OPTIONAL MATCH (k)-[:HAS_MEMBER]->(m)
  WITH k, count(m) AS members
  RETURN count(k) AS clusters,
         sum(CASE WHEN members < (CASE WHEN k.level = 1 THEN 1 ELSE 2 END) THEN 1 ELSE 0 END) AS undersized,
         sum(CASE WHEN k.size <> members THEN 1 ELSE 0 END) AS wrong_size,
         sum(CASE WHEN coalesce(k.dissolved, false) OR coalesce(k.pending, false) THEN 1 ELSE 0 END) AS leftovers
}
CALL () {
  MATCH (c:Chunk {namespace: $namespace})<-[:HAS_MEMBER]-(k:Cluster {namespace: $namespace, level: 1})
  WITH c, count(k) AS parents
  RETURN sum(CASE WHEN parents > 1 THEN 1 ELSE 0 END) AS overlapping_chunks
}
CALL () {
  MATCH (r:Replica {namespace: $namespace})
  WHERE NOT EXISTS { (r)-[:REPLICA_OF]->() }
  RETURN count(r) AS orphan_replicas
}
RETURN chunks, unreachable_chunks, bad_member_edges, clusters, undersized, wrong_size, leftovers,
       overlapping_chunks, orphan_replicas

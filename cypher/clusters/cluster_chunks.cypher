// A few chunks under each cluster (its provenance as evidence), found lazily.
// $ids: [cluster id], $limit: chunks per cluster
UNWIND $ids AS cluster_id
MATCH (k:Cluster {namespace: $namespace, id: cluster_id})
CALL (k) {
  MATCH (k)-[:HAS_MEMBER*1..12]->(c:Chunk {namespace: $namespace})
  WITH DISTINCT c LIMIT $limit
  RETURN collect(c.id) AS chunk_ids, collect(DISTINCT c.doc_id) AS doc_ids
}
RETURN k.id AS id, chunk_ids, doc_ids

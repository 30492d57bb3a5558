// Clusters whose group fell below the minimum size: they lose their members at
// once and stay (dissolved, pending) only until the level above has read their
// state and removed them. $ids: [cluster id]
UNWIND $ids AS cluster_id
MATCH (k:Cluster {namespace: $namespace, id: cluster_id})
SET k.dissolved = true, k.pending = true, k.updated_at = datetime()
WITH k
CALL (k) {
  MATCH (k)-[m:HAS_MEMBER]->()
  DELETE m
}

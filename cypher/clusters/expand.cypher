// Prune-and-Grow, grow step: the same-level neighbours (SIMILAR) and the
// children (HAS_MEMBER) of the active nodes. Children of a level-1 cluster are
// chunks (level 0). $chunk_ids, $cluster_ids: the active nodes
CALL () {
  UNWIND $chunk_ids AS node_id
  MATCH (c:Chunk {namespace: $namespace, id: node_id})-[:SIMILAR {namespace: $namespace}]-(o:Chunk)
  RETURN c.id AS source, o.id AS id, 0 AS level, 'neighbour' AS relation
  UNION ALL
  UNWIND $cluster_ids AS node_id
  MATCH (k:Cluster {namespace: $namespace, id: node_id})-[:SIMILAR {namespace: $namespace}]-(o:Cluster)
  WHERE NOT coalesce(o.dissolved, false)
  RETURN k.id AS source, o.id AS id, o.level AS level, 'neighbour' AS relation
  UNION ALL
  UNWIND $cluster_ids AS node_id
  MATCH (k:Cluster {namespace: $namespace, id: node_id})-[:HAS_MEMBER {namespace: $namespace}]->(m)
  RETURN k.id AS source, m.id AS id, CASE WHEN m:Chunk THEN 0 ELSE m.level END AS level, 'child' AS relation
}
RETURN source, id, level, relation

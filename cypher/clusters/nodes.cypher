// Chunks and clusters by id, as the cluster strategy shows them: level 0 for a
// chunk (its title and text), the cluster level with its title, summary and size.
// $chunk_ids: [chunk id], $cluster_ids: [cluster id]
CALL () {
  UNWIND $chunk_ids AS node_id
  MATCH (c:Chunk {namespace: $namespace, id: node_id})
  RETURN c.id AS id, 0 AS level, coalesce(c.title, '') AS title, c.text AS text, c.doc_id AS doc_id, 1 AS size
  UNION ALL
  UNWIND $cluster_ids AS node_id
  MATCH (k:Cluster {namespace: $namespace, id: node_id})
  WHERE NOT coalesce(k.dissolved, false)
  RETURN k.id AS id, k.level AS level, coalesce(k.title, '') AS title, k.summary AS text, '' AS doc_id,
         coalesce(k.size, 0) AS size
}
RETURN id, level, title, text, doc_id, size

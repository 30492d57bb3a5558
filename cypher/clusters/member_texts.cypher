// What a cluster summary is made from: chunk title and text (level 1 clusters)
// or the title, summary and source chunks of the clusters below.
// $level: level of the members, $ids
UNWIND $ids AS node_id
OPTIONAL MATCH (c:Chunk {namespace: $namespace, id: node_id}) WHERE $level = 0
OPTIONAL MATCH (k:Cluster {namespace: $namespace, id: node_id}) WHERE $level > 0
WITH c, k
WHERE c IS NOT NULL OR k IS NOT NULL
RETURN coalesce(c.id, k.id) AS id, coalesce(c.title, k.title, '') AS title,
       coalesce(c.text, k.summary, '') AS text,
       CASE WHEN c IS NOT NULL THEN [c.id] ELSE coalesce(k.sources, []) END AS sources

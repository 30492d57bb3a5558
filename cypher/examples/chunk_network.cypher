// A chunk's SIMILAR neighbours (the level-0 network clusters are grown from) and the
// level-1 clusters they share with it. Set :param chunk_id => '<document id>#0'.
MATCH (c:Chunk {namespace: $namespace, id: $chunk_id})-[s:SIMILAR]-(n:Chunk)
OPTIONAL MATCH (k:Cluster {namespace: $namespace, level: 1})-[:HAS_MEMBER]->(c)
WHERE (k)-[:HAS_MEMBER]->(n)
RETURN n.title AS neighbour, round(s.weight, 3) AS weight, collect(k.title) AS shared_clusters
ORDER BY weight DESC

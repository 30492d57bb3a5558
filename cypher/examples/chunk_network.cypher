// A chunk's SIMILAR neighbours (the level-0 network clusters are grown from), strongest first, with the level-1 clusters they share with it.
// :param chunk_id => 'doc-aba73115c7ced3a0e7da#0'
MATCH (c:Chunk {namespace: $namespace, id: $chunk_id})-[s:SIMILAR]-(n:Chunk)
OPTIONAL MATCH (k:Cluster {namespace: $namespace, level: 1})-[:HAS_MEMBER]->(c)
WHERE (k)-[:HAS_MEMBER]->(n)
RETURN n.id AS neighbour_id, n.title AS neighbour, round(s.weight, 3) AS weight, collect(k.title) AS shared_clusters
ORDER BY weight DESC, neighbour_id

// One chunk's clusters, level by level up to the top (a chunk can sit in several
// clusters: CAM's overlapping memory). Set :param chunk_id => '<document id>#0'.
MATCH path = (top:Cluster {namespace: $namespace})-[:HAS_MEMBER*1..12]->(c:Chunk {namespace: $namespace, id: $chunk_id})
WHERE NOT EXISTS { MATCH (:Cluster {namespace: $namespace})-[:HAS_MEMBER]->(top) }
RETURN path
LIMIT 25

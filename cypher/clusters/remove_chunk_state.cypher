// Take chunks out of the chunk network: their SIMILAR links and replicas (the
// chunks themselves belong to ingestion). $ids: [chunk id]
UNWIND $ids AS chunk_id
MATCH (c:Chunk {namespace: $namespace, id: chunk_id})
CALL (c) {
  MATCH (c)-[s:SIMILAR {namespace: $namespace}]-()
  DELETE s
}
CALL (c) {
  MATCH (c)<-[:REPLICA_OF]-(r:Replica {namespace: $namespace})
  DETACH DELETE r
}
CALL (c) {
  MATCH (:Cluster {namespace: $namespace})-[m:HAS_MEMBER]->(c)
  DELETE m
}

// What the memory stages derived from one document's chunks: gists, chunk
// replicas of the cluster network, and cluster memberships (zero after a delete).
// Chunk ids are "<document id>#<n>".
CALL () { MATCH (g:Gist {namespace: $namespace, doc_id: $doc_id}) RETURN count(g) AS gists }
CALL () {
  MATCH (r:Replica {namespace: $namespace})
  WHERE r.node_id STARTS WITH $doc_id + '#'
  RETURN count(r) AS replicas
}
CALL () {
  MATCH (:Cluster {namespace: $namespace})-[m:HAS_MEMBER]->(:Chunk {namespace: $namespace, doc_id: $doc_id})
  RETURN count(m) AS memberships
}
RETURN gists + replicas + memberships AS count, gists, replicas, memberships

// Relationship counts of one namespace by type, other than QA (see namespace_counts), for
// `engramdb stats`. Counted as degrees of the namespace's own nodes, which Neo4j keeps
// per node, instead of scanning every relationship: an edge never leaves its namespace.
CALL () {
  MATCH (d:Document {namespace: $namespace})
  RETURN sum(COUNT { (d)-[:HAS_CHUNK]->() }) AS has_chunk_edges
}
CALL () {
  MATCH (c:Chunk {namespace: $namespace})
  RETURN sum(COUNT { (c)-[:MENTIONS]->() }) AS mentions_edges,
         sum(COUNT { (c)-[:HAS_VERB_PHRASE]->() }) AS has_verb_phrase_edges
}
CALL () {
  MATCH (e:Entity {namespace: $namespace})
  RETURN sum(COUNT { (e)-[:ROLE_IN]->() }) AS role_in_edges
}
RETURN has_chunk_edges, mentions_edges, has_verb_phrase_edges, role_in_edges

// Entity BM25 for several queries at once (one per beam of a hop).
// $queries: [{i, lucene}] — each lucene string built by engramdb
// (retrieval.hop_retrieval.lucene_query) from escaped terms, already requiring
// the namespace's `namespace_key`; the WHERE is a second, exact guard.
// Equal scores are ordered by id over four times the limit (see chunk_bm25.cypher).
UNWIND $queries AS q
CALL (q) {
  CALL db.index.fulltext.queryNodes('entity_search', q.lucene, {limit: 4 * $limit}) YIELD node, score
  WHERE node.namespace = $namespace
  RETURN node, score
  ORDER BY score DESC, node.id
  LIMIT $limit
}
RETURN q.i AS i, node.id AS id, score

// Entity BM25 for several queries at once (one per beam of a hop).
// $queries: [{i, lucene}] — each lucene string built by engramdb from escaped
// terms, already requiring the namespace.
UNWIND $queries AS q
CALL db.index.fulltext.queryNodes('entity_fulltext', q.lucene, {limit: $limit}) YIELD node, score
WHERE node.namespace = $namespace
RETURN q.i AS i, node.id AS id, score

// Entity BM25 restricted to a given set of entities (local investigation ranks a
// memory point's neighbourhood). $lucene is built by engramdb from escaped terms
// and already requires the namespace; the first $scan hits are filtered to $ids.
CALL db.index.fulltext.queryNodes('entity_search', $lucene, {limit: $scan}) YIELD node, score
WHERE node.namespace = $namespace AND node.id IN $ids
RETURN node.id AS id, score
ORDER BY score DESC, id
LIMIT $limit

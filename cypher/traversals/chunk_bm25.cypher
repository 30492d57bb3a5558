// BM25 (Lucene) over passages: the keyword baseline. $lucene is built by
// engramdb (retrieval.hop_retrieval.lucene_query) from escaped terms and already
// requires the namespace's `namespace_key`; the WHERE is a second, exact guard.
CALL db.index.fulltext.queryNodes('chunk_search', $lucene, {limit: $limit}) YIELD node, score
WHERE node.namespace = $namespace
RETURN node.id AS chunk_id, node.doc_id AS doc_id, node.title AS title, node.text AS text, score

// BM25 (Lucene) over passages: the keyword baseline. $lucene is built by
// engramdb from escaped terms and already requires the namespace.
CALL db.index.fulltext.queryNodes('chunk_fulltext', $lucene, {limit: $limit}) YIELD node, score
WHERE node.namespace = $namespace
RETURN node.id AS chunk_id, node.doc_id AS doc_id, node.title AS title, node.text AS text, score

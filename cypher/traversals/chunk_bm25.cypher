// BM25 (Lucene) over passages: the keyword baseline. $lucene is built by
// engramdb (retrieval.hop_retrieval.lucene_query) from escaped terms and already
// requires the namespace's `namespace_key`; the WHERE is a second, exact guard.
// Lucene orders equal scores (frequent: it stores lengths coarsely) by its internal
// document numbers, which change as its segments merge; so four times the limit is read
// and equal scores are ordered by id, and the same memory gives the same passages.
// Each passage comes with its document's title and source, so citing it needs no second read,
// and with the namespace's memory version (traversals/memory_version) read in the same
// transaction, so the offline answer's N/A bar needs no freshness read of its own.
OPTIONAL MATCH (m:MemoryVersion {namespace: $namespace, id: 'version'})
WITH m.epoch AS memory_epoch, coalesce(m.version, 0) AS memory_version
CALL db.index.fulltext.queryNodes('chunk_search', $lucene, {limit: 4 * $limit}) YIELD node, score
WHERE node.namespace = $namespace
WITH memory_epoch, memory_version, node, score
ORDER BY score DESC, node.id
LIMIT $limit
MATCH (d:Document {namespace: $namespace})-[:HAS_CHUNK]->(node)
RETURN node.id AS chunk_id, node.doc_id AS doc_id, node.title AS title, node.text AS text,
       d.title AS doc_title, d.source AS source, score, memory_epoch, memory_version
ORDER BY score DESC, chunk_id

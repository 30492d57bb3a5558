// Passages by chunk id, in the order given (dense passage search results), each with its
// document's title and source so that citing them needs no second read, and with the namespace's
// memory version (traversals/memory_version) read in the same transaction, so the offline answer's
// N/A bar needs no freshness read of its own (as traversals/chunk_bm25).
OPTIONAL MATCH (m:MemoryVersion {namespace: $namespace, id: 'version'})
WITH m.epoch AS memory_epoch, coalesce(m.version, 0) AS memory_version
UNWIND range(0, size($ids) - 1) AS i
MATCH (d:Document {namespace: $namespace})-[:HAS_CHUNK]->(c:Chunk {namespace: $namespace, id: $ids[i]})
RETURN i, c.id AS chunk_id, c.doc_id AS doc_id, c.title AS title, c.text AS text,
       d.title AS doc_title, d.source AS source, memory_epoch, memory_version
ORDER BY i

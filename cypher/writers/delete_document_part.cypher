// Remove up to $limit chunks of one document with what they contributed: their
// verb phrases and QA edges (a delete has removed them already with
// delete_chunk_verb_phrases, two transactions at a time; this takes any left, so no part
// leaves a verb phrase without its chunk), their mentions, then every entity no chunk mentions any more
// (a Gist's mentions follow its chunk). Run repeatedly until it deletes fewer than $limit chunks, so even a
// huge document is removed in bounded transactions; each part is consistent on
// its own (no orphan entity survives a part). The document was marked `pending`
// before the delete began (mark_document_pending): if the process dies half-way, it
// is redone or deleted again, never taken for complete. The Document node itself
// goes with delete_document_node. Returns the chunks deleted, the deleted entity ids
// (their vectors go too) and the survivors (their index text is refreshed).
MATCH (d:Document {namespace: $namespace, id: $doc_id})-[:HAS_CHUNK]->(c:Chunk)
WITH c LIMIT $limit
OPTIONAL MATCH (c)-[:MENTIONS]->(e:Entity)
WITH collect(DISTINCT c) AS chunks, collect(DISTINCT e) AS touched
CALL (chunks) {
  UNWIND chunks AS c
  OPTIONAL MATCH (c)-[:HAS_VERB_PHRASE]->(v:VerbPhrase)
  DETACH DELETE v
}
CALL (chunks) {
  UNWIND chunks AS c
  DETACH DELETE c
}
WITH size(chunks) AS deleted_chunks, touched
CALL (touched) {
  UNWIND touched AS e
  // one remaining mention is enough to keep an entity: stop at the first rather than count them all
  // (an entity a long document names on every page has thousands, and each part asks again)
  WITH e, EXISTS { (e)<-[:MENTIONS]-(:Chunk) } AS mentioned
  RETURN collect(CASE WHEN NOT mentioned THEN e END) AS orphans,
         collect(CASE WHEN mentioned THEN e.id END) AS survivors
}
WITH deleted_chunks, survivors, orphans, [o IN orphans | o.id] AS deleted_ids
CALL (orphans) {
  UNWIND orphans AS o
  DETACH DELETE o
}
RETURN deleted_chunks, deleted_ids, survivors

// Remove what one document contributed: its chunks, verb phrases, QA edges and
// mentions, then every entity no longer mentioned anywhere. The Document node
// itself goes too unless $keep_document (re-ingest keeps it, as pending).
// Returns the deleted entity ids (their vectors go too) and the survivors
// (their index text is refreshed).
MATCH (d:Document {namespace: $namespace, id: $doc_id})
OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk)
OPTIONAL MATCH (c)-[:MENTIONS]->(e:Entity)
WITH d, collect(DISTINCT c) AS chunks, collect(DISTINCT e) AS touched
CALL (chunks) {
  UNWIND chunks AS c
  OPTIONAL MATCH (c)-[:HAS_VERB_PHRASE]->(v:VerbPhrase)
  DETACH DELETE v
}
CALL (chunks) {
  UNWIND chunks AS c
  DETACH DELETE c
}
CALL (d) {
  WITH d WHERE NOT $keep_document
  DETACH DELETE d
}
WITH touched
UNWIND (CASE WHEN size(touched) = 0 THEN [null] ELSE touched END) AS e
WITH e WHERE e IS NOT NULL
OPTIONAL MATCH (e)<-[m:MENTIONS]-()
WITH e, count(m) AS remaining
WITH collect(CASE WHEN remaining = 0 THEN e END) AS orphans,
     collect(CASE WHEN remaining > 0 THEN e.id END) AS survivors
WITH [o IN orphans | o.id] AS deleted_ids, orphans, survivors
CALL (orphans) {
  UNWIND orphans AS o
  DETACH DELETE o
}
RETURN deleted_ids, survivors

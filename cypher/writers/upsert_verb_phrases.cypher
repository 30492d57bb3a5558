// Verb-phrase (event) nodes of a chunk, and the entities each one involves.
// $rows: [{id, text, doc_id, chunk_id, entity_ids}]
UNWIND $rows AS row
MATCH (c:Chunk {namespace: $namespace, id: row.chunk_id})
MERGE (v:VerbPhrase {namespace: $namespace, id: row.id})
SET v.text = row.text, v.doc_id = row.doc_id, v.chunk_id = row.chunk_id
MERGE (c)-[h:HAS_VERB_PHRASE]->(v)
SET h.namespace = $namespace
WITH v, row
UNWIND row.entity_ids AS entity_id
MATCH (e:Entity {namespace: $namespace, id: entity_id})
MERGE (e)-[r:ROLE_IN]->(v)
SET r.namespace = $namespace, r.doc_id = row.doc_id

// One Gist node per chunk, (Chunk)-[:HAS_GIST]->(Gist), and (Gist)-[:MENTIONS]->(Entity)
// for the entities the gist names. Re-indexing a chunk replaces its gist's text and mentions.
// $rows: [{id, chunk_id, doc_id, text, method, fact_count, entity_ids}]
UNWIND $rows AS row
MATCH (c:Chunk {namespace: $namespace, id: row.chunk_id})
MERGE (g:Gist {namespace: $namespace, id: row.id})
SET g.chunk_id = row.chunk_id, g.doc_id = row.doc_id, g.text = row.text, g.method = row.method,
    g.fact_count = row.fact_count, g.updated_at = datetime()
MERGE (c)-[h:HAS_GIST]->(g)
SET h.namespace = $namespace
WITH g, row
CALL (g) {
  MATCH (g)-[old:MENTIONS]->(:Entity)
  DELETE old
}
WITH g, row
UNWIND row.entity_ids AS entity_id
MATCH (e:Entity {namespace: $namespace, id: entity_id})
MERGE (g)-[m:MENTIONS]->(e)
SET m.namespace = $namespace

// One step of memory evolution, written in one transaction: every new MemoryPoint
// (an insert, a new version of an updated point, or a merged higher-order point),
// linked from its Query, to the entities it involves, the chunks that support it,
// the point version it revises (update) and the points it was merged from (merge).
// Revised and merged-from points stay as history but are no longer active.
// A point is written only if at least two of its entities still exist, so no point
// ever involves fewer than two entities; the ids written are returned.
// $rows: [{id, point, version, step, seq, operation, description, entity_ids,
//          chunk_ids, doc_ids, revises, merged_from}]
MATCH (q:Query {namespace: $namespace, id: $query_id})
UNWIND $rows AS row
CALL (row) {
  UNWIND row.entity_ids AS entity_id
  MATCH (e:Entity {namespace: $namespace, id: entity_id})
  RETURN collect(e) AS entities
}
WITH q, row, entities
WHERE size(entities) >= 2
CREATE (p:MemoryPoint {namespace: $namespace, id: row.id})
SET p.query_id = $query_id, p.point = row.point, p.version = row.version, p.step = row.step,
    p.seq = row.seq, p.operation = row.operation, p.description = row.description,
    p.doc_ids = row.doc_ids, p.active = true
CREATE (q)-[:HAS_POINT {namespace: $namespace}]->(p)
WITH p, row, entities
CALL (p, entities) {
  UNWIND entities AS e
  CREATE (p)-[:INVOLVES {namespace: $namespace}]->(e)
}
CALL (p, row) {
  UNWIND row.chunk_ids AS chunk_id
  MATCH (c:Chunk {namespace: $namespace, id: chunk_id})
  CREATE (p)-[:SUPPORTED_BY {namespace: $namespace}]->(c)
}
CALL (p, row) {
  MATCH (old:MemoryPoint {namespace: $namespace, id: row.revises})
  SET old.active = false
  CREATE (p)-[:REVISES {namespace: $namespace}]->(old)
}
CALL (p, row) {
  UNWIND row.merged_from AS source_id
  MATCH (src:MemoryPoint {namespace: $namespace, id: source_id})
  SET src.active = false
  CREATE (p)-[:MERGED_FROM {namespace: $namespace}]->(src)
}
RETURN p.id AS id

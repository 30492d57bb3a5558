// Remove one hypergraph run: its Query node and every memory point it wrote
// (found by query_id as well, so a run interrupted between writes goes too).
// Entities and chunks are memory, not the run: they stay.
OPTIONAL MATCH (q:Query {namespace: $namespace, id: $query_id})
OPTIONAL MATCH (p:MemoryPoint {namespace: $namespace, query_id: $query_id})
WITH collect(DISTINCT q) AS queries, collect(DISTINCT p) AS points
CALL (points) {
  UNWIND points AS p
  DETACH DELETE p
}
CALL (queries) {
  UNWIND queries AS q
  DETACH DELETE q
}
RETURN size(queries) AS queries, size(points) AS points

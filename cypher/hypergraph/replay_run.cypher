// Replay a kept run: its memory points in the order they were written (step, then
// the order within the step: inserts, updates, merges), with the entities each
// involves, the point version it revises and the points it was merged from.
MATCH (q:Query {namespace: $namespace, id: $query_id})-[:HAS_POINT]->(p:MemoryPoint {namespace: $namespace})
OPTIONAL MATCH (p)-[:INVOLVES]->(e:Entity {namespace: $namespace})
WITH q, p, collect(e.name) AS entity_names, collect(e.id) AS entity_ids
OPTIONAL MATCH (p)-[:MERGED_FROM]->(src:MemoryPoint {namespace: $namespace})
WITH q, p, entity_names, entity_ids, collect(src.point + ' v' + toString(src.version)) AS merged_from
OPTIONAL MATCH (p)-[:REVISES]->(old:MemoryPoint {namespace: $namespace})
OPTIONAL MATCH (p)-[:SUPPORTED_BY]->(c:Chunk {namespace: $namespace})
WITH q, p, entity_names, entity_ids, merged_from, old, count(c) AS chunks
RETURN q.id AS query_id, q.question AS question, q.strategy AS strategy,
       toString(q.created_at) AS created_at, p.id AS id, p.point AS point, p.version AS version,
       p.step AS step, p.seq AS seq, p.operation AS operation, p.description AS description,
       p.active AS active, entity_names, entity_ids, merged_from,
       CASE WHEN old IS NULL THEN null ELSE old.point + ' v' + toString(old.version) END AS revises,
       chunks, p.doc_ids AS doc_ids
ORDER BY step, seq

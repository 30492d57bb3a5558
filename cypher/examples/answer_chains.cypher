// The chains behind a kept run's answer: each active memory point (the answer's evidence) with the point versions it grew from through merges and updates, its entities and the chunks supporting it.
// :param query_id => 'q-...'
MATCH (q:Query {namespace: $namespace, id: $query_id})-[:HAS_POINT]->(p:MemoryPoint)
WHERE p.active
CALL (p) {
  OPTIONAL MATCH (p)-[:MERGED_FROM|REVISES*1..20]->(x:MemoryPoint)
  WITH DISTINCT x
  ORDER BY x.step, x.seq
  RETURN collect(x.operation + ' ' + x.point + ' v' + toString(x.version) + ' (step ' + toString(x.step) + ')')
         AS grew_from
}
RETURN q.question AS question, p.point + ' v' + toString(p.version) AS point, p.operation AS operation,
       p.step AS step, p.description AS description,
       [(p)-[:INVOLVES]->(e:Entity) | e.name] AS entities,
       [(p)-[:SUPPORTED_BY]->(c:Chunk) | c.title] AS chunks,
       grew_from
ORDER BY step, p.seq

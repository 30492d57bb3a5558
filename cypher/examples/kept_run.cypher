// A kept hypergraph run as a graph: the Query, every memory point it wrote (in step order, with its operation), the entities each point involves and the older points that merges and updates replaced.
// :param query_id => 'q-...'
MATCH (q:Query {namespace: $namespace, id: $query_id})-[h:HAS_POINT]->(p:MemoryPoint)
RETURN p.step AS step, p.operation AS operation, p.point + ' v' + toString(p.version) AS point,
       p.active AS active, p.description AS description,
       q, h, p,
       [(p)-[i:INVOLVES]->(:Entity) | i] AS involves,
       [(p)-[:INVOLVES]->(e:Entity) | e] AS entities,
       [(p)-[m:MERGED_FROM|REVISES]->(:MemoryPoint) | m] AS replaced
ORDER BY p.step, p.seq
LIMIT 300

// Kept hypergraph runs (ask --strategy hypergraph --set keep_memory=true), newest first: the question, its steps and memory points, and how many points are active (the answer's evidence).
MATCH (q:Query {namespace: $namespace})
WITH q, [(q)-[:HAS_POINT]->(p:MemoryPoint) | p] AS points
RETURN q.id AS query_id, q.question AS question, q.strategy AS strategy, toString(q.created_at) AS created_at,
       reduce(last = -1, p IN points | CASE WHEN p.step > last THEN p.step ELSE last END) + 1 AS steps,
       size(points) AS points, size([p IN points WHERE p.active]) AS active_points
ORDER BY q.created_at DESC
LIMIT 50

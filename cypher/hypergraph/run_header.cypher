// A run's Query node alone (a kept run whose points were all removed still has one).
MATCH (q:Query {namespace: $namespace, id: $query_id})
RETURN q.id AS query_id, q.question AS question, q.strategy AS strategy, toString(q.created_at) AS created_at

// Rebuild from scratch, step 1 (run until it deletes nothing): drop replicas in slices.
MATCH (r:Replica {namespace: $namespace})
WITH r LIMIT $limit
DETACH DELETE r
RETURN count(*) AS deleted

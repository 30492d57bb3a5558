// Rebuild from scratch, step 2 (run until it deletes nothing): drop clusters in slices.
MATCH (k:Cluster {namespace: $namespace})
WITH k LIMIT $limit
DETACH DELETE k
RETURN count(*) AS deleted

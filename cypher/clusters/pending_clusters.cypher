// Clusters whose change the level above has not yet absorbed (left by an
// interrupted run): they are carried into the next growth step.
MATCH (k:Cluster {namespace: $namespace})
WHERE k.pending
RETURN k.id AS id, k.level AS level, coalesce(k.dissolved, false) AS dissolved

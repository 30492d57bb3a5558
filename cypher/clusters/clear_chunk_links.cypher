// Rebuild from scratch, step 3 (run until it deletes nothing): drop the chunk network in slices.
MATCH (:Chunk {namespace: $namespace})-[s:SIMILAR {namespace: $namespace}]->()
WITH s LIMIT $limit
DELETE s
RETURN count(*) AS deleted

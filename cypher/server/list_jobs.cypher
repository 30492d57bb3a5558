// The newest job records, at most $limit; only those of $namespaces unless it is null.
MATCH (j:EngramJob)
WHERE $namespaces IS NULL OR j.job_namespace IN $namespaces
RETURN properties(j) AS job
ORDER BY j.created DESC
LIMIT $limit

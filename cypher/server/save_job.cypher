// spans namespaces: job records belong to the server, and a job names its namespace as a property
// Create or update one ingest job's record ($job: its fields; lists and reports as JSON text).
// `job_namespace`, not `namespace`: a job is no node of the memory, and namespace-wide queries
// (counts, deletes, health checks) must never see it.
MERGE (j:EngramJob {id: $job.id})
SET j += $job

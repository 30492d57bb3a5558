// Create or update one ingest job's record ($job: its fields; lists and reports as JSON text).
// `job_namespace`, not `namespace`: a job is no node of the memory, and namespace-wide queries
// (counts, deletes, health checks) must never see it.
MERGE (j:EngramJob {id: $job.id})
SET j += $job

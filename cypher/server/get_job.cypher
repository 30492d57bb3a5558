// spans namespaces: job records belong to the server, and a job names its namespace as a property
// One job record by id (a job of an earlier run of this server, or of another server).
MATCH (j:EngramJob {id: $id})
RETURN properties(j) AS job

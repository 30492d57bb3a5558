// spans namespaces: job records belong to the server, and a job names its namespace as a property
// Keep the newest $keep finished job records; older finished ones go.
MATCH (j:EngramJob)
WHERE j.state IN ['done', 'failed']
WITH j ORDER BY j.created DESC
SKIP $keep
DETACH DELETE j

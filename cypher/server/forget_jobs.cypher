// Keep the newest $keep finished job records; older finished ones go.
MATCH (j:EngramJob)
WHERE j.state IN ['done', 'failed']
WITH j ORDER BY j.created DESC
SKIP $keep
DETACH DELETE j

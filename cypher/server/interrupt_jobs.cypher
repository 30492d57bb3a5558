// spans namespaces: job records belong to the server, and a job names its namespace as a property
// At start: this data home's jobs that were queued or running when its server last stopped
// without finishing them (it was killed or crashed) are failed, saying so. Returns their ids.
MATCH (j:EngramJob {home_id: $home_id})
WHERE j.state IN ['queued', 'running']
SET j.state = 'failed', j.error = $error, j.finished = $now
RETURN j.id AS id

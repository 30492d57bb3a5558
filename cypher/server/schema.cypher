// spans namespaces: job records belong to the server, and a job names its namespace as a property
// engramdb serve: ingest job records, one node per job, kept in Neo4j so a job's end (or its
// interruption by a killed server) outlives the process. Applied by the server at start.
CREATE CONSTRAINT engram_job_id IF NOT EXISTS FOR (j:EngramJob) REQUIRE j.id IS UNIQUE;
CREATE INDEX engram_job_home IF NOT EXISTS FOR (j:EngramJob) ON (j.home_id, j.state);

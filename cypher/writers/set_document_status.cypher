// Per-document ingest status: pending → done | failed (with the reason).
// `ingest_version` names the pipeline, extractor and embedder that made the memory; `ingested_by` the
// writer that extracted and wrote it (host/pid/run), and its claim on the document ends here.
// $rows: [{id, status, error, chunk_count, qa_count, ingest_version, writer}]
UNWIND $rows AS row
MATCH (d:Document {namespace: $namespace, id: row.id})
SET d.status = row.status, d.error = row.error, d.chunk_count = row.chunk_count,
    d.qa_count = row.qa_count, d.ingest_version = row.ingest_version, d.updated_at = datetime(),
    d.ingested_by = row.writer, d.claimed_by = null, d.claim_until = null
WITH count(*) AS changed
// Every change to the namespace's documents bumps its memory version (one node per namespace), so a
// reader can tell in one index seek whether its cached view is stale (traversals/memory_version).
MERGE (m:MemoryVersion {namespace: $namespace, id: 'version'})
ON CREATE SET m.epoch = randomUUID(), m.version = 0
SET m.version = m.version + 1, m.changed_at = datetime()

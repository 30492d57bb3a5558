// Per-document ingest status: pending → done | failed (with the reason).
// `ingest_version` names the pipeline, extractor and embedder that made the memory.
// $rows: [{id, status, error, chunk_count, qa_count, ingest_version}]
UNWIND $rows AS row
MATCH (d:Document {namespace: $namespace, id: row.id})
SET d.status = row.status, d.error = row.error, d.chunk_count = row.chunk_count,
    d.qa_count = row.qa_count, d.ingest_version = row.ingest_version, d.updated_at = datetime()

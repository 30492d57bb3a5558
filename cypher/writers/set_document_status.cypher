// Per-document ingest status: pending → done | failed (with the reason).
// $rows: [{id, status, error, chunk_count, qa_count}]
UNWIND $rows AS row
MATCH (d:Document {namespace: $namespace, id: row.id})
SET d.status = row.status, d.error = row.error, d.chunk_count = row.chunk_count,
    d.qa_count = row.qa_count, d.updated_at = datetime()

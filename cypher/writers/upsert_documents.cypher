// Create or update Document nodes (one row per document).
// $rows: [{id, title, source, content_hash, metadata_json, status}]
UNWIND $rows AS row
MERGE (d:Document {namespace: $namespace, id: row.id})
SET d.title = row.title,
    d.source = row.source,
    d.content_hash = row.content_hash,
    d.metadata_json = row.metadata_json,
    d.status = row.status,
    d.error = null,
    d.updated_at = datetime()

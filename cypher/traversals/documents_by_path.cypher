// Documents read from these files (absolute paths): a re-ingest finds a file's document by where
// the file is, whatever id it was given (ingestion/identity.py).
UNWIND $paths AS path
MATCH (d:Document {namespace: $namespace, path: path})
RETURN d.id AS id, d.path AS path, d.source AS source, d.content_hash AS content_hash

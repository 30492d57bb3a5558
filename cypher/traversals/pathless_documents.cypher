// Documents stored before ingest kept a file's path (their id was the file's base name), with the
// same source or the same content as files being ingested: candidates for being those files
// (ingestion/identity.py decides). One pass over the namespace's documents.
MATCH (d:Document {namespace: $namespace})
WHERE d.path IS NULL AND (d.source IN $sources OR d.content_hash IN $hashes)
RETURN d.id AS id, d.path AS path, d.source AS source, d.content_hash AS content_hash
ORDER BY id

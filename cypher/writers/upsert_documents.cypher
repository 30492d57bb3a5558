// Create or update Document nodes (one row per document).
// `namespace_key` spells the namespace as one lowercase a-z word (z escapes: zz = z, zu<x> = upper X,
// za..zj = 0..9, zk = _, zl = ., zm = -), the same as engramdb.ingestion.writer.namespace_key: the
// full-text indexes filter by it, and the document's chunks and entities copy it.
// `path` is the absolute path of the file a document was read from (null for texts and corpus items):
// how a later ingest of the same file finds it whatever id it was given (traversals/documents_by_path).
// $rows: [{id, title, source, path, content_hash, metadata_json, status}]
WITH 'ns' + reduce(k = '', c IN split($namespace, '') | k + CASE
       WHEN c = 'z' THEN 'zz'
       WHEN c >= 'a' AND c <= 'y' THEN c
       WHEN c >= 'A' AND c <= 'Z' THEN 'zu' + toLower(c)
       WHEN c >= '0' AND c <= '9' THEN 'z' + substring('abcdefghij', toInteger(c), 1)
       WHEN c = '_' THEN 'zk'
       WHEN c = '.' THEN 'zl'
       ELSE 'zm' END) AS namespace_key
UNWIND $rows AS row
MERGE (d:Document {namespace: $namespace, id: row.id})
SET d.title = row.title,
    d.source = row.source,
    d.path = row.path,
    d.content_hash = row.content_hash,
    d.metadata_json = row.metadata_json,
    d.status = row.status,
    d.error = null,
    d.namespace_key = namespace_key,
    d.updated_at = datetime()
WITH count(*) AS changed
// Every change to the namespace's documents bumps its memory version (one node per namespace), so a
// reader can tell in one index seek whether its cached view is stale (traversals/memory_version).
MERGE (m:MemoryVersion {namespace: $namespace, id: 'version'})
ON CREATE SET m.epoch = randomUUID(), m.version = 0
SET m.version = m.version + 1, m.changed_at = datetime()

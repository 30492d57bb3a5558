// The Document node of a document whose chunks are already gone (delete_document_part).
MATCH (d:Document {namespace: $namespace, id: $doc_id})
DETACH DELETE d
WITH count(*) AS changed
// Every change to the namespace's documents bumps its memory version (one node per namespace), so a
// reader can tell in one index seek whether its cached view is stale (traversals/memory_version).
MERGE (m:MemoryVersion {namespace: $namespace, id: 'version'})
ON CREATE SET m.epoch = randomUUID(), m.version = 0
SET m.version = m.version + 1, m.changed_at = datetime()

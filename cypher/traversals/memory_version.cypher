// The namespace's memory version: bumped in the same transaction as every write or delete of a
// Document (writers/upsert_documents, set_document_status, delete_document_node), so any ingest or
// delete, by any process, changes (epoch, version). Strategies that cache something derived from the
// whole memory (the diffusion walk graph, chain search's N/A calibration) compare it before use: one
// index seek, however many documents the namespace holds. `epoch` is drawn when the node is created,
// so a namespace wiped and built again never repeats an earlier (epoch, version). No node yet: a
// namespace never written by this version of engramdb (epoch null, version 0).
OPTIONAL MATCH (m:MemoryVersion {namespace: $namespace, id: 'version'})
RETURN m.epoch AS epoch, coalesce(m.version, 0) AS version

// The first write of a delete (or of the re-ingest that replaces a document's memory): the
// document is marked `pending` before any of its memory goes, in the vector store or the graph.
// If the process stops half-way, the document is then redone by the next ingest of its file or
// deleted again, never skipped as complete while its vectors or stage memory are gone.
MATCH (d:Document {namespace: $namespace, id: $doc_id})
SET d.status = 'pending'

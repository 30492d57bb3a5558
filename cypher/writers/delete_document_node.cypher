// The Document node of a document whose chunks are already gone (delete_document_part).
MATCH (d:Document {namespace: $namespace, id: $doc_id})
DETACH DELETE d

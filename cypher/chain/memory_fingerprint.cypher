// What changes whenever a namespace's memory changes (every ingest stamps its
// documents' updated_at; a delete removes a Document): chain search keeps its
// calibrated N/A threshold only while (documents, updated_at) stays the same.
MATCH (d:Document {namespace: $namespace})
RETURN count(d) AS documents, toString(max(d.updated_at)) AS updated_at

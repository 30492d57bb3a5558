// What changes whenever a namespace's memory changes: every ingest stamps its
// documents' updated_at (when written and again when done or failed), and a
// delete removes a Document. So (count, latest stamp) differs after any ingest or
// delete; the diffusion strategy compares it before each question to decide
// whether its in-memory walk graph is stale. Reads only Document nodes.
MATCH (d:Document {namespace: $namespace})
RETURN count(d) AS documents, toString(max(d.updated_at)) AS updated_at

// Forget the gists of one document (runs before its chunks are deleted); returns how many
// Gist nodes went. Each chunk's gist is found by its id (`gist:<chunk id>`) and any other gist
// carrying the document's id through the gist_document index: both are index seeks, so the cost
// is the document's gists, not the namespace's (a scan of every gist with a filter read 5,670
// records to delete one gist of the 1,890-passage MuSiQue memory).
CALL () {
  UNWIND $gist_ids AS gist_id
  MATCH (g:Gist {namespace: $namespace, id: gist_id})
  RETURN g
  UNION
  MATCH (g:Gist {namespace: $namespace, doc_id: $doc_id})
  RETURN g
}
DETACH DELETE g
RETURN count(*) AS deleted

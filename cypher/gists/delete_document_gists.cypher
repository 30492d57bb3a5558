// Forget up to $limit gists carrying one document's id (runs before its chunks are deleted, after
// delete_gists took each chunk's gist by its id); returns how many Gist nodes went, and is run
// again until fewer than $limit go. The gists are found through the gist_document index, so the
// cost is the document's gists, not the namespace's (a scan of every gist with a filter read 5,670
// records to delete one gist of the 1,890-passage MuSiQue memory).
MATCH (g:Gist {namespace: $namespace, doc_id: $doc_id})
WITH g LIMIT $limit
DETACH DELETE g
RETURN count(*) AS deleted

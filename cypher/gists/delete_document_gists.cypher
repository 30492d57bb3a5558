// Forget the gists of one document (runs before its chunks are deleted);
// returns how many Gist nodes went.
MATCH (g:Gist {namespace: $namespace})
WHERE g.doc_id = $doc_id OR g.chunk_id IN $chunk_ids
DETACH DELETE g
RETURN count(*) AS deleted

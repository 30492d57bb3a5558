// Forget some gists by their ids (`gist:<chunk id>`), one slice of a document's chunks per
// transaction; returns how many Gist nodes went. A document's delete runs this on slices of its
// chunks, then delete_document_gists for any gist left that carries the document's id. Slices,
// not one transaction: on the 5 MB benchmark's memory (3,485 gists, about 50 mentions each) the
// whole document in one transaction took 6.6-7.0 s and 11-12 s of Neo4j's CPU, in slices of
// 128 chunks 4.0-4.9 s and 8-9 s (see ingestion/stages/gists.py).
UNWIND $gist_ids AS gist_id
MATCH (g:Gist {namespace: $namespace, id: gist_id})
DETACH DELETE g
RETURN count(*) AS deleted

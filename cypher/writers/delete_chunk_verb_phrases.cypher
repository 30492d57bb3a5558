// Remove the verb phrases of some chunks with their QA edges and roles; returns how many went.
// A document's delete runs this on disjoint slices of its chunks from two threads before its parts
// (delete_document_part): verb phrases and QA edges are most of what a long document stores, and
// one transaction deleting them leaves a core of Neo4j idle. Two slices touching one entity wait
// on its lock or, in a deadlock, one is run again by the driver; the document is `pending` all the
// while (mark_document_pending), and its parts finish what a run cut short left.
UNWIND $chunk_ids AS chunk_id
MATCH (:Chunk {namespace: $namespace, id: chunk_id})-[:HAS_VERB_PHRASE]->(v:VerbPhrase)
DETACH DELETE v
RETURN count(*) AS deleted

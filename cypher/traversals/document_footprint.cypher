// What of one document is still in the graph: its Document node, chunks, verb
// phrases and QA edges (all zero after a delete).
CALL () { MATCH (d:Document {namespace: $namespace, id: $doc_id}) RETURN count(d) AS documents }
CALL () { MATCH (c:Chunk {namespace: $namespace, doc_id: $doc_id}) RETURN count(c) AS chunks }
CALL () { MATCH (v:VerbPhrase {namespace: $namespace, doc_id: $doc_id}) RETURN count(v) AS verb_phrases }
CALL () {
  MATCH (:VerbPhrase {namespace: $namespace})-[q:QA]->(:Entity {namespace: $namespace})
  WHERE q.doc_id = $doc_id
  RETURN count(q) AS qa_edges
}
RETURN documents, chunks, verb_phrases, qa_edges

// The GSW of one document as a graph: chunks, verb phrases, QA edges and entities.
// :param doc_id => '...'
MATCH (d:Document {namespace: $namespace, id: $doc_id})-[hc:HAS_CHUNK]->(c:Chunk)
OPTIONAL MATCH (c)-[hv:HAS_VERB_PHRASE]->(v:VerbPhrase)-[q:QA]->(a:Entity)
OPTIONAL MATCH (e:Entity)-[r:ROLE_IN]->(v)
RETURN d, hc, c, hv, v, q, a, r, e

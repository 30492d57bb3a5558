// A document's workspace (its GSW): chunks, verb phrases, the entities taking part and the QA edges, as text and as a graph; one row per verb phrase.
// :param doc_id => 'doc-aba73115c7ced3a0e7da'
MATCH (d:Document {namespace: $namespace, id: $doc_id})-[hc:HAS_CHUNK]->(c:Chunk)
OPTIONAL MATCH (c)-[hv:HAS_VERB_PHRASE]->(v:VerbPhrase)
// Lists per verb phrase, not more OPTIONAL MATCHes: those would multiply into one row per
// (QA edge x participant) combination.
RETURN c.position AS chunk, v.text AS verb_phrase,
       [(e:Entity)-[:ROLE_IN]->(v) | e.name] AS entities,
       [(v)-[q:QA]->(a:Entity) | q.question + ' -> ' + a.name] AS qa_pairs,
       d, hc, c, hv, v,
       [(e:Entity)-[r:ROLE_IN]->(v) | r] AS roles,
       [(e:Entity)-[:ROLE_IN]->(v) | e] AS participants,
       [(v)-[q:QA]->(:Entity) | q] AS qa_edges,
       [(v)-[:QA]->(a:Entity) | a] AS answers
ORDER BY chunk, v.id
LIMIT 300

// A chunk's gist and facts (the gists stage): first the gist with the entities it names, then one row per fact, i.e. a verb phrase with the entities taking part and its QA pairs.
// :param chunk_id => 'doc-aba73115c7ced3a0e7da#0'
MATCH (c:Chunk {namespace: $namespace, id: $chunk_id})
CALL (c) {
  MATCH (c)-[:HAS_GIST]->(g:Gist)
  RETURN 0 AS rank, 'gist' AS kind, g.text AS text, [(g)-[:MENTIONS]->(e:Entity) | e.name] AS entities,
         [] AS qa_pairs
  UNION ALL
  MATCH (c)-[:HAS_VERB_PHRASE]->(v:VerbPhrase)
  RETURN 1 AS rank, 'fact' AS kind, v.text AS text, [(e:Entity)-[:ROLE_IN]->(v) | e.name] AS entities,
         [(v)-[q:QA]->(a:Entity) | q.question + ' -> ' + a.name] AS qa_pairs
}
RETURN c.title AS chunk, kind, text, entities, qa_pairs
ORDER BY rank, text
LIMIT 200

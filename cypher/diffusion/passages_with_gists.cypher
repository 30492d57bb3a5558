// Passages by chunk id, in the order given, each with its document (for
// citations), its gist when the gists stage wrote one and, when $with_qa, its
// QA pairs (the offline answer is the best of them), one list per QA pair and
// answer entity: [qa id, question, question entity ids, verb phrase, answer id,
// answer name, answer type] (lists, not maps: this read is on every question's
// path and lists decode faster). One read gives the strategy all it returns.
UNWIND range(0, size($ids) - 1) AS i
MATCH (d:Document {namespace: $namespace})-[:HAS_CHUNK]->(c:Chunk {namespace: $namespace, id: $ids[i]})
OPTIONAL MATCH (c)-[:HAS_GIST]->(g:Gist {namespace: $namespace})
RETURN i, c.id AS chunk_id, d.id AS doc_id, c.title AS title, c.text AS text,
       d.title AS doc_title, d.source AS source,
       g.id AS gist_id, g.text AS gist_text, g.method AS gist_method,
       CASE WHEN $with_qa THEN
         [(c)-[:HAS_VERB_PHRASE]->(v:VerbPhrase)-[q:QA]->(a:Entity) |
            [q.id, q.question, q.question_entity_ids, v.text, a.id, a.name, a.type]]
       ELSE [] END AS qa
ORDER BY i

// Passages by chunk id, in the order given, each with its document (for
// citations), its gist when the gists stage wrote one and, when $with_qa, its
// QA pairs (one map per QA pair and answer entity; the offline answer is the
// best of them). One read gives the diffusion strategy everything it returns.
UNWIND range(0, size($ids) - 1) AS i
MATCH (d:Document {namespace: $namespace})-[:HAS_CHUNK]->(c:Chunk {namespace: $namespace, id: $ids[i]})
OPTIONAL MATCH (c)-[:HAS_GIST]->(g:Gist {namespace: $namespace})
RETURN i, c.id AS chunk_id, d.id AS doc_id, c.title AS title, c.text AS text,
       d.title AS doc_title, d.source AS source,
       g.id AS gist_id, g.text AS gist_text, g.method AS gist_method,
       CASE WHEN $with_qa THEN
         [(c)-[:HAS_VERB_PHRASE]->(v:VerbPhrase)-[q:QA]->(a:Entity) |
            {qa_id: q.id, question: q.question, question_entity_ids: q.question_entity_ids,
             verb_phrase: v.text, doc_id: q.doc_id, chunk_id: q.chunk_id,
             answer_id: a.id, answer_name: a.name, answer_type: a.type}]
       ELSE [] END AS qa
ORDER BY i

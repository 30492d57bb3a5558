// The QA pairs extracted from some chunks, with their answers (an offline answer from a strategy's
// evidence is the best of them: retrieval/evidence_answer.py). $chunk_ids: [chunk id]
UNWIND $chunk_ids AS chunk_id
MATCH (c:Chunk {namespace: $namespace, id: chunk_id})-[:HAS_VERB_PHRASE]->(v:VerbPhrase)-[q:QA {namespace: $namespace}]->(a:Entity)
WITH v, q.id AS qa_id, q.question AS question, q.doc_id AS doc_id, q.chunk_id AS chunk_id,
     q.question_entity_ids AS question_entity_ids, collect(a) AS answers
RETURN qa_id, question, v.text AS verb_phrase, doc_id, chunk_id, question_entity_ids,
       [a IN answers | a.id] AS answer_ids, [a IN answers | a.name] AS answer_names,
       [a IN answers | a.type] AS answer_types

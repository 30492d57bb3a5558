// QA pairs: one QA relationship from the verb phrase to each answer entity.
// `id` is the QA id (also the key of its vector in Qdrant); `key` is unique.
// $rows: [{id, key, verb_phrase_id, answer_id, question, question_entity_ids,
//          answer_entity_ids, doc_id, chunk_id}]
UNWIND $rows AS row
MATCH (v:VerbPhrase {namespace: $namespace, id: row.verb_phrase_id})
MATCH (a:Entity {namespace: $namespace, id: row.answer_id})
MERGE (v)-[q:QA {namespace: $namespace, key: row.key}]->(a)
SET q.id = row.id, q.namespace = $namespace, q.question = row.question,
    q.question_entity_ids = row.question_entity_ids, q.answer_entity_ids = row.answer_entity_ids,
    q.doc_id = row.doc_id, q.chunk_id = row.chunk_id

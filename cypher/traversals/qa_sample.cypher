// $limit QA pairs spread evenly over the namespace (ordered by id): the
// pseudo-questions from which the offline N/A bar of an evidence answer is derived.
MATCH ()-[q:QA {namespace: $namespace}]->()
WITH DISTINCT q.id AS id, q.question AS question, q.doc_id AS doc_id
ORDER BY id
WITH collect({id: id, question: question, doc_id: doc_id}) AS pairs
WITH pairs, toInteger(ceil(size(pairs) / toFloat($limit))) AS step
UNWIND (CASE WHEN size(pairs) = 0 THEN [] ELSE range(0, size(pairs) - 1, CASE WHEN step < 1 THEN 1 ELSE step END) END) AS i
RETURN pairs[i].id AS id, pairs[i].question AS question, pairs[i].doc_id AS doc_id
LIMIT $limit

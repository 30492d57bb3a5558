// Schema objects replaced by later versions; dropped before the current schema is applied.
// QA keys became unique per namespace (was: globally).
DROP CONSTRAINT qa_key IF EXISTS;
// The entity full-text index gained the namespace field under a new name.
DROP INDEX entity_text IF EXISTS;
// The full-text indexes filtered by `namespace`, which the analyzer splits at '_', '-' and '.' and folds
// to lower case: they became entity_search / chunk_search over `namespace_key`, the namespace spelled as
// one a-z word (see writers/upsert_documents).
DROP INDEX entity_fulltext IF EXISTS;
DROP INDEX chunk_fulltext IF EXISTS;
// Memory written before `namespace_key` existed gets it, document by document (a no-op afterwards: only
// documents without the key are visited), in bounded transactions.
MATCH (d:Document) WHERE d.namespace_key IS NULL
CALL (d) {
  WITH d, 'ns' + reduce(k = '', c IN split(d.namespace, '') | k + CASE
         WHEN c = 'z' THEN 'zz'
         WHEN c >= 'a' AND c <= 'y' THEN c
         WHEN c >= 'A' AND c <= 'Z' THEN 'zu' + toLower(c)
         WHEN c >= '0' AND c <= '9' THEN 'z' + substring('abcdefghij', toInteger(c), 1)
         WHEN c = '_' THEN 'zk'
         WHEN c = '.' THEN 'zl'
         ELSE 'zm' END) AS key
  SET d.namespace_key = key
  WITH d, key
  OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk)
  SET c.namespace_key = key
  WITH DISTINCT c, key
  OPTIONAL MATCH (c)-[:MENTIONS]->(e:Entity)
  SET e.namespace_key = key
} IN TRANSACTIONS OF 10 ROWS;

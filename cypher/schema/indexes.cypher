// Namespace indexes: every read starts by narrowing to one namespace.
CREATE INDEX document_namespace IF NOT EXISTS FOR (n:Document) ON (n.namespace);
CREATE INDEX document_status IF NOT EXISTS FOR (n:Document) ON (n.namespace, n.status);
// A file's document is found by its path on a re-ingest, whatever id it got (ingestion/identity.py).
CREATE INDEX document_path IF NOT EXISTS FOR (n:Document) ON (n.namespace, n.path);
CREATE INDEX chunk_namespace IF NOT EXISTS FOR (n:Chunk) ON (n.namespace);
CREATE INDEX entity_namespace IF NOT EXISTS FOR (n:Entity) ON (n.namespace);
CREATE INDEX entity_normalized_name IF NOT EXISTS FOR (n:Entity) ON (n.namespace, n.normalized_name);
CREATE INDEX verb_phrase_namespace IF NOT EXISTS FOR (n:VerbPhrase) ON (n.namespace);
CREATE INDEX gist_namespace IF NOT EXISTS FOR (n:Gist) ON (n.namespace);
// A document's delete finds the gists that carry its id without reading the namespace's others.
CREATE INDEX gist_document IF NOT EXISTS FOR (n:Gist) ON (n.namespace, n.doc_id);
CREATE INDEX memory_point_namespace IF NOT EXISTS FOR (n:MemoryPoint) ON (n.namespace);
CREATE INDEX cluster_namespace IF NOT EXISTS FOR (n:Cluster) ON (n.namespace);
// Cluster stage: the nodes of a level whose replicas carry a label (= the cluster one level up).
CREATE INDEX replica_label IF NOT EXISTS FOR (n:Replica) ON (n.namespace, n.level, n.label);
CREATE INDEX query_trace_namespace IF NOT EXISTS FOR (n:QueryTrace) ON (n.namespace);
CREATE INDEX memory_point_query IF NOT EXISTS FOR (n:MemoryPoint) ON (n.namespace, n.query_id);
CREATE INDEX qa_namespace IF NOT EXISTS FOR ()-[r:QA]-() ON (r.namespace);
CREATE INDEX qa_document IF NOT EXISTS FOR ()-[r:QA]-() ON (r.doc_id);
CREATE INDEX qa_id IF NOT EXISTS FOR ()-[r:QA]-() ON (r.id);
// The BM25 entity index (Panini's sparse half): name, aliases, roles and states.
// `namespace_key` (the namespace spelled as one a-z word, see writers/upsert_documents) is indexed too,
// so a search is restricted to one namespace inside Lucene and its top hits are that namespace's.
CREATE FULLTEXT INDEX entity_search IF NOT EXISTS FOR (n:Entity) ON EACH [n.name, n.aliases_text, n.roles_text, n.states_text, n.namespace_key];
// BM25 over passages (the baseline `ask` is compared with; also keyword search).
CREATE FULLTEXT INDEX chunk_search IF NOT EXISTS FOR (n:Chunk) ON EACH [n.title, n.text, n.namespace_key];
// Wait until every index is online before the first query uses it.
CALL db.awaitIndexes(300);

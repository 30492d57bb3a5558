// engramdb schema: uniqueness per namespace for every node label.
// Applied idempotently by `engramdb init` and on first use.
// Every node carries `namespace` and `id`; (namespace, id) is unique per label.
CREATE CONSTRAINT document_key IF NOT EXISTS FOR (n:Document) REQUIRE (n.namespace, n.id) IS UNIQUE;
CREATE CONSTRAINT chunk_key IF NOT EXISTS FOR (n:Chunk) REQUIRE (n.namespace, n.id) IS UNIQUE;
CREATE CONSTRAINT entity_key IF NOT EXISTS FOR (n:Entity) REQUIRE (n.namespace, n.id) IS UNIQUE;
CREATE CONSTRAINT verb_phrase_key IF NOT EXISTS FOR (n:VerbPhrase) REQUIRE (n.namespace, n.id) IS UNIQUE;
CREATE CONSTRAINT gist_key IF NOT EXISTS FOR (n:Gist) REQUIRE (n.namespace, n.id) IS UNIQUE;
CREATE CONSTRAINT memory_point_key IF NOT EXISTS FOR (n:MemoryPoint) REQUIRE (n.namespace, n.id) IS UNIQUE;
CREATE CONSTRAINT cluster_key IF NOT EXISTS FOR (n:Cluster) REQUIRE (n.namespace, n.id) IS UNIQUE;
CREATE CONSTRAINT query_trace_key IF NOT EXISTS FOR (n:QueryTrace) REQUIRE (n.namespace, n.id) IS UNIQUE;
CREATE CONSTRAINT query_key IF NOT EXISTS FOR (n:Query) REQUIRE (n.namespace, n.id) IS UNIQUE;
CREATE CONSTRAINT memory_version_key IF NOT EXISTS FOR (n:MemoryVersion) REQUIRE (n.namespace, n.id) IS UNIQUE;
CREATE CONSTRAINT replica_key IF NOT EXISTS FOR (n:Replica) REQUIRE (n.namespace, n.id) IS UNIQUE;
// A QA pair is one QA relationship per answer entity: `id` is the QA id (it keys the
// QA vector in Qdrant), `key` = id + "->" + answer entity id is unique within the namespace.
CREATE CONSTRAINT qa_namespace_key IF NOT EXISTS FOR ()-[r:QA]-() REQUIRE (r.namespace, r.key) IS UNIQUE;

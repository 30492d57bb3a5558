// Panini's sparse half: BM25 (Lucene) over entity name, aliases, roles and
// states. $lucene is built by engramdb from escaped terms and already requires
// the namespace; the WHERE makes the namespace match exact.
CALL db.index.fulltext.queryNodes('entity_fulltext', $lucene, {limit: $limit}) YIELD node, score
WHERE node.namespace = $namespace
RETURN node.id AS id, node.name AS name, node.type AS type, score

// Provenance: which chunk mentions which entity, under which surface name and
// aliases, with the type, roles and states the entity has there (kept per
// chunk, so deleting a document removes exactly its contribution).
// `alias_keys` are the normalized names this mention was known by; entity
// reconciliation looks them up, so later documents join the same node.
// The entity takes the chunk's `namespace_key` (the namespace as one word, for keyword search).
// $rows: [{chunk_id, entity_id, doc_id, surface, type, aliases, alias_keys, roles, states}]
UNWIND $rows AS row
MATCH (c:Chunk {namespace: $namespace, id: row.chunk_id})
MATCH (e:Entity {namespace: $namespace, id: row.entity_id})
MERGE (c)-[m:MENTIONS]->(e)
SET m.namespace = $namespace, m.doc_id = row.doc_id, m.surface = row.surface, m.type = row.type,
    m.aliases = row.aliases, m.alias_keys = row.alias_keys, m.roles = row.roles, m.states = row.states,
    e.namespace_key = c.namespace_key

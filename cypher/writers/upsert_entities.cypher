// Entities reconciled across documents: one node per (namespace, id).
// The first mention names the node. Aliases, types, roles and states live on
// the MENTIONS edges and are folded into the node by refresh_entity_text.
// $rows: [{id, name, normalized_name, type}]
UNWIND $rows AS row
MERGE (e:Entity {namespace: $namespace, id: row.id})
ON CREATE SET e.name = row.name, e.normalized_name = row.normalized_name, e.type = row.type

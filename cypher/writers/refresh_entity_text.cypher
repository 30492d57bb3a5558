// Rebuild what an entity node shows and the BM25 entity index searches
// (aliases, types, roles, states) from the mentions that still exist.
// Run after writes and after deletes. $ids: entity ids to refresh.
UNWIND $ids AS entity_id
MATCH (e:Entity {namespace: $namespace, id: entity_id})
OPTIONAL MATCH (:Chunk)-[m:MENTIONS]->(e)
WITH e, collect(m) AS mentions
WITH e, mentions,
     reduce(acc = [], m IN mentions | acc + [a IN coalesce(m.aliases, []) + [m.surface]
                                             WHERE a IS NOT NULL AND a <> e.name AND NOT a IN acc]) AS aliases,
     reduce(acc = [], m IN mentions | acc + [k IN coalesce(m.alias_keys, []) WHERE NOT k IN acc]) AS alias_keys,
     reduce(acc = [], m IN mentions | acc + [t IN [m.type] WHERE t IS NOT NULL AND NOT t IN acc]) AS types,
     reduce(acc = [], m IN mentions | acc + [r IN coalesce(m.roles, []) WHERE NOT r IN acc]) AS roles,
     reduce(acc = [], m IN mentions | acc + [s IN coalesce(m.states, []) WHERE NOT s IN acc]) AS states
SET e.aliases = aliases,
    e.alias_keys = alias_keys,
    e.types = types,
    e.roles = roles,
    e.states = states,
    e.aliases_text = reduce(t = '', a IN aliases | t + ' ' + a),
    e.roles_text = reduce(t = '', r IN roles | t + ' ' + r),
    e.states_text = reduce(t = '', s IN states | t + ' ' + s),
    e.mention_count = size(mentions)

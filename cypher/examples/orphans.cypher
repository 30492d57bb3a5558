// Orphan check: nodes that lost what should hold them (an entity no chunk mentions, a verb phrase or gist without its chunk, a chunk without its document, a memory point without its query, a replica without its node). No rows: memory is consistent.
CALL () {
  MATCH (e:Entity {namespace: $namespace})
  WHERE NOT EXISTS { (:Chunk)-[:MENTIONS]->(e) }
  RETURN 'Entity' AS label, e.id AS id, e.name AS name, 'no chunk mentions it' AS problem
  UNION ALL
  MATCH (v:VerbPhrase {namespace: $namespace})
  WHERE NOT EXISTS { (:Chunk)-[:HAS_VERB_PHRASE]->(v) }
  RETURN 'VerbPhrase' AS label, v.id AS id, v.text AS name, 'no chunk has it' AS problem
  UNION ALL
  MATCH (c:Chunk {namespace: $namespace})
  WHERE NOT EXISTS { (:Document)-[:HAS_CHUNK]->(c) }
  RETURN 'Chunk' AS label, c.id AS id, c.title AS name, 'no document has it' AS problem
  UNION ALL
  MATCH (g:Gist {namespace: $namespace})
  WHERE NOT EXISTS { (:Chunk)-[:HAS_GIST]->(g) }
  RETURN 'Gist' AS label, g.id AS id, left(g.text, 60) AS name, 'no chunk has it' AS problem
  UNION ALL
  MATCH (p:MemoryPoint {namespace: $namespace})
  WHERE NOT EXISTS { (:Query)-[:HAS_POINT]->(p) }
  RETURN 'MemoryPoint' AS label, p.id AS id, left(p.description, 60) AS name, 'no query has it' AS problem
  UNION ALL
  MATCH (r:Replica {namespace: $namespace})
  WHERE NOT EXISTS { (r)-[:REPLICA_OF]->() }
  RETURN 'Replica' AS label, r.id AS id, r.node_id AS name, 'its node is gone' AS problem
}
RETURN label, id, name, problem
ORDER BY label, id
LIMIT 200

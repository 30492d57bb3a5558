// The whole passage–entity graph of a namespace in one read, for the diffusion
// strategy's in-memory walk: its chunks, its entities (with how many chunks
// mention each), chunk–entity MENTIONS pairs and, per verb phrase (a GSW fact),
// the entities taking part in it (each fact links them pairwise).
CALL () {
  MATCH (c:Chunk {namespace: $namespace})
  WHERE c.status = 'done'
  RETURN collect(c.id) AS chunk_ids
}
CALL () {
  MATCH (e:Entity {namespace: $namespace})
  RETURN collect(e.id) AS entity_ids, collect(e.name) AS entity_names
}
CALL () {
  MATCH (c:Chunk {namespace: $namespace})-[:MENTIONS]->(e:Entity)
  WHERE c.status = 'done'
  RETURN collect([c.id, e.id]) AS mentions
}
CALL () {
  MATCH (v:VerbPhrase {namespace: $namespace})<-[:ROLE_IN]-(e:Entity)
  WITH v, collect(e.id) AS members
  WHERE size(members) > 1
  RETURN collect(members) AS facts
}
RETURN chunk_ids, entity_ids, entity_names, mentions, facts

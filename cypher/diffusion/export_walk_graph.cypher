// The whole passage–entity graph of a namespace in one read, for the diffusion
// strategy's in-memory walk: its chunks (with their document titles), its
// entities (with their normalised names), chunk–entity MENTIONS pairs and, per
// verb phrase (a GSW fact), the entities taking part in it (each fact links
// them pairwise). Titles, normalised names and the alias keys a mention was
// known by let the strategy link a passage to the entity its title names, and
// entities that share a name or an alias.
CALL () {
  MATCH (c:Chunk {namespace: $namespace})
  WHERE c.status = 'done'
  RETURN collect(c.id) AS chunk_ids, collect(coalesce(c.title, '')) AS chunk_titles
}
CALL () {
  MATCH (e:Entity {namespace: $namespace})
  RETURN collect(e.id) AS entity_ids, collect(e.name) AS entity_names,
         collect(coalesce(e.normalized_name, '')) AS entity_keys
}
CALL () {
  MATCH (c:Chunk {namespace: $namespace})-[m:MENTIONS]->(e:Entity)
  WHERE c.status = 'done'
  RETURN collect([c.id, e.id]) AS mentions,
         collect(CASE WHEN size(coalesce(m.alias_keys, [])) > 0 THEN [e.id] + m.alias_keys END) AS aliases
}
CALL () {
  MATCH (v:VerbPhrase {namespace: $namespace})<-[:ROLE_IN]-(e:Entity)
  WITH v, collect(e.id) AS members
  WHERE size(members) > 1
  RETURN collect(members) AS facts
}
RETURN chunk_ids, chunk_titles, entity_ids, entity_names, entity_keys, mentions, aliases, facts

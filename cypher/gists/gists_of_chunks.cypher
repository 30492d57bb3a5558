// Gists of chunks by chunk id (what the stage wrote), with the entities each names.
UNWIND $chunk_ids AS chunk_id
MATCH (c:Chunk {namespace: $namespace, id: chunk_id})-[:HAS_GIST]->(g:Gist {namespace: $namespace})
RETURN c.id AS chunk_id, g.id AS gist_id, g.text AS text, g.method AS method, g.fact_count AS fact_count,
       [(g)-[:MENTIONS]->(e:Entity) | e.id] AS entity_ids

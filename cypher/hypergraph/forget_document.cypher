// Document-delete cascade for kept hypergraph memory. Works before or after the
// document's own memory is deleted: the document is named by id, and an entity
// counts as gone when no chunk of another document mentions it.
//  1. the document's chunks stop supporting any point, and leave its doc_ids;
//  2. points stop involving entities that only this document mentioned;
//  3. points left with fewer than two entities (also those whose entities the
//     document delete already removed), or whose every supporting
//     document was this one, are removed (their description rested on it).
// Returns how many points were changed and removed.
MATCH (p:MemoryPoint {namespace: $namespace})
WHERE $doc_id IN p.doc_ids
   OR EXISTS { MATCH (p)-[:SUPPORTED_BY]->(c:Chunk {namespace: $namespace}) WHERE c.doc_id = $doc_id }
   OR EXISTS {
     MATCH (p)-[:INVOLVES]->(e:Entity {namespace: $namespace})<-[:MENTIONS]-(c:Chunk {namespace: $namespace})
     WHERE c.doc_id = $doc_id
   }
   OR COUNT { (p)-[:INVOLVES]->(:Entity) } < 2
WITH collect(p) AS touched
CALL (touched) {
  UNWIND touched AS p
  OPTIONAL MATCH (p)-[s:SUPPORTED_BY]->(c:Chunk {namespace: $namespace}) WHERE c.doc_id = $doc_id
  DELETE s
}
CALL (touched) {
  UNWIND touched AS p
  MATCH (p)-[i:INVOLVES]->(e:Entity {namespace: $namespace})
  WHERE NOT EXISTS {
    MATCH (e)<-[:MENTIONS]-(c:Chunk {namespace: $namespace}) WHERE c.doc_id <> $doc_id
  }
  DELETE i
}
CALL (touched) {
  UNWIND touched AS p
  WITH p, $doc_id IN coalesce(p.doc_ids, []) AS had_doc
  SET p.doc_ids = [d IN coalesce(p.doc_ids, []) WHERE d <> $doc_id]
  WITH p, had_doc
  WHERE COUNT { (p)-[:INVOLVES]->(:Entity) } < 2 OR (had_doc AND size(p.doc_ids) = 0)
  DETACH DELETE p
  RETURN count(*) AS removed
}
RETURN size(touched) AS touched, removed

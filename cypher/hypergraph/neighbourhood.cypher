// Local investigation's search space: the neighbours of one memory point's entities
// in the stored graph (entities taking part in the same verb phrase) and in this
// run's working memory (entities sharing an active memory point with them).
// At most $per_anchor graph neighbours per anchor entity, $limit in all.
UNWIND $anchor_ids AS anchor_id
MATCH (a:Entity {namespace: $namespace, id: anchor_id})
CALL (a) {
  MATCH (a)-[:ROLE_IN]->(:VerbPhrase {namespace: $namespace})<-[:ROLE_IN]-(n:Entity {namespace: $namespace})
  RETURN n, 'graph' AS via
  LIMIT $per_anchor
  UNION
  MATCH (a)<-[:INVOLVES]-(:MemoryPoint {namespace: $namespace, query_id: $query_id, active: true})
        -[:INVOLVES]->(n:Entity {namespace: $namespace})
  RETURN n, 'memory' AS via
}
WITH n, collect(DISTINCT via) AS via
WHERE NOT n.id IN $anchor_ids
RETURN n.id AS id, n.name AS name, via
ORDER BY size(via) DESC, id
LIMIT $limit

// Entities reconciled across the most documents (the connective tissue of memory).
MATCH (e:Entity {namespace: $namespace})<-[m:MENTIONS]-(:Chunk)
WITH e, count(DISTINCT m.doc_id) AS documents
WHERE documents > 1
RETURN e.name AS entity, e.types AS types, e.aliases AS aliases, documents
ORDER BY documents DESC, entity
LIMIT 50

// Counts of every node label and the QA edges in one namespace (engramdb stats).
CALL () { MATCH (n:Document {namespace: $namespace}) RETURN count(n) AS documents }
CALL () { MATCH (n:Chunk {namespace: $namespace}) RETURN count(n) AS chunks }
CALL () { MATCH (n:Entity {namespace: $namespace}) RETURN count(n) AS entities }
CALL () { MATCH (n:VerbPhrase {namespace: $namespace}) RETURN count(n) AS verb_phrases }
CALL () { MATCH ()-[r:QA {namespace: $namespace}]->() RETURN count(r) AS qa_edges, count(DISTINCT r.id) AS qa_pairs }
CALL () { MATCH (n:Gist {namespace: $namespace}) RETURN count(n) AS gists }
CALL () { MATCH (n:MemoryPoint {namespace: $namespace}) RETURN count(n) AS memory_points }
CALL () { MATCH (n:Cluster {namespace: $namespace}) RETURN count(n) AS clusters }
RETURN documents, chunks, entities, verb_phrases, qa_pairs, qa_edges, gists, memory_points, clusters

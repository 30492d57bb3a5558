// SIMILAR links of one level, stored once per pair (from the smaller id to the
// larger) with their CAM score as `weight`. Level 0 links chunks, higher levels
// link clusters of that level. $level: int, $rows: [{a, b, weight}] with a < b
UNWIND $rows AS row
OPTIONAL MATCH (ca:Chunk {namespace: $namespace, id: row.a}) WHERE $level = 0
OPTIONAL MATCH (cb:Chunk {namespace: $namespace, id: row.b}) WHERE $level = 0
OPTIONAL MATCH (ka:Cluster {namespace: $namespace, id: row.a}) WHERE $level > 0
OPTIONAL MATCH (kb:Cluster {namespace: $namespace, id: row.b}) WHERE $level > 0
WITH row, coalesce(ca, ka) AS a, coalesce(cb, kb) AS b
WHERE a IS NOT NULL AND b IS NOT NULL
MERGE (a)-[s:SIMILAR]->(b)
SET s.namespace = $namespace, s.level = $level, s.weight = row.weight

// Clusters of one level (>= 1) with their members: chunks at level 1, clusters of
// the level below otherwise. `pending` says the level above has not yet taken
// this change into account (cleared when it has), so a crash between levels is
// picked up by the next run. $level: int,
// $rows: [{id, title, summary, members: [id], revision}]
UNWIND $rows AS row
MERGE (k:Cluster {namespace: $namespace, id: row.id})
SET k.level = $level, k.title = row.title, k.summary = row.summary, k.size = size(row.members),
    k.revision = row.revision, k.pending = true, k.dissolved = false,
    k.updated_at = datetime()
WITH k, row
CALL (k, row) {
  MATCH (k)-[m:HAS_MEMBER]->(old)
  WHERE NOT old.id IN row.members
  DELETE m
}
CALL (k, row) {
  UNWIND row.members AS member_id
  OPTIONAL MATCH (c:Chunk {namespace: $namespace, id: member_id}) WHERE $level = 1
  OPTIONAL MATCH (x:Cluster {namespace: $namespace, id: member_id}) WHERE $level > 1
  WITH coalesce(c, x) AS member
  WHERE member IS NOT NULL
  MERGE (k)-[h:HAS_MEMBER]->(member)
  SET h.namespace = $namespace
}

// Clusters of one level (>= 1) with their members: chunks at level 1, clusters of
// the level below otherwise. `basis` hashes the members the summary rests on and
// `revision` names the growth step that last wrote the summary, `sources` the
// chunks its text comes from (in order). `pending` says
// the level above has not yet taken a new summary into account (cleared when it
// has), so a crash between levels is picked up by the next run.
// $level: int, $rows: [{id, title, summary, basis, sources: [chunk id], members: [id], revision, pending}]
UNWIND $rows AS row
MERGE (k:Cluster {namespace: $namespace, id: row.id})
SET k.level = $level, k.title = row.title, k.summary = row.summary, k.basis = row.basis, k.sources = row.sources,
    k.size = size(row.members), k.revision = row.revision, k.dissolved = false,
    k.pending = coalesce(k.pending, false) OR row.pending, k.updated_at = datetime()
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

// Claim documents for one writer before extracting them, so that writers sharing one Neo4j (several
// servers or processes ingesting the same input at once) never extract and write the same document
// twice. Each node is locked before it is read (the SET of claim_lock takes the node's write lock,
// held to the end of the transaction), so a concurrent claim of the same document waits for this one
// and then reads its claim. Outcome per row:
//   'done'    memory already holds this content, made by this ingest version: nothing to do;
//   'busy'    another writer holds a claim whose lease has not run out (and is not in $takeover,
//             the holders this writer knows to be dead);
//   'claimed' the document is this writer's until timestamp() + $lease_ms (renewed as its parts land,
//             released when its status is written).
// `has_memory` is false for a node only a claim has made (nothing of an earlier run to clear).
// Times are the Neo4j server's clock (timestamp(), ms), the one clock every writer shares.
// $rows: [{id, title, source, content_hash}]  $writer  $lease_ms  $ingest_version  $takeover: [writer]
UNWIND $rows AS row
MERGE (d:Document {namespace: $namespace, id: row.id})
ON CREATE SET d.status = 'pending', d.title = row.title, d.source = row.source
SET d.claim_lock = true
REMOVE d.claim_lock
WITH d, row, CASE
       WHEN d.status = 'done' AND d.content_hash = row.content_hash AND d.ingest_version = $ingest_version
         THEN 'done'
       WHEN d.claimed_by IS NOT NULL AND d.claimed_by <> $writer AND d.claim_until > timestamp()
            AND NOT d.claimed_by IN $takeover
         THEN 'busy'
       ELSE 'claimed' END AS outcome
SET d.claimed_by = CASE outcome WHEN 'claimed' THEN $writer ELSE d.claimed_by END,
    d.claim_until = CASE outcome WHEN 'claimed' THEN timestamp() + $lease_ms ELSE d.claim_until END
RETURN row.id AS id, outcome, d.claimed_by AS holder, d.updated_at IS NOT NULL AS has_memory,
       d.content_hash AS content_hash, d.status AS status

// Extend this writer's claims on documents it is still writing (after each part lands), so a long
// document keeps its claim however long its extraction takes; a claim another writer has taken over
// (its lease ran out) is not renewed. $ids: [document id]  $writer  $lease_ms
UNWIND $ids AS doc_id
MATCH (d:Document {namespace: $namespace, id: doc_id})
WHERE d.claimed_by = $writer
SET d.claim_until = timestamp() + $lease_ms
RETURN count(d) AS renewed

// Give up this writer's claims on documents it will not finish (an ingest stopped by an error or a
// shutdown), so another writer need not wait for the lease to run out; their status stays 'pending'
// and the next ingest resumes them. $ids: [document id]  $writer
UNWIND $ids AS doc_id
MATCH (d:Document {namespace: $namespace, id: doc_id})
WHERE d.claimed_by = $writer
SET d.claimed_by = null, d.claim_until = null

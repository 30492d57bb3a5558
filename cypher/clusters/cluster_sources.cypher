// The chunks a cluster summary's text comes from, in order, with their documents
// (a summary's provenance as evidence). $ids: [cluster id]
UNWIND $ids AS cluster_id
MATCH (k:Cluster {namespace: $namespace, id: cluster_id})
UNWIND range(0, size(coalesce(k.sources, [])) - 1) AS i
MATCH (c:Chunk {namespace: $namespace, id: k.sources[i]})
RETURN k.id AS id, i, c.id AS chunk_id, c.doc_id AS doc_id
ORDER BY id, i

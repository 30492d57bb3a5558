// The nodes of one level whose replicas carry each label (a label is the id of
// the cluster one level up that groups them). Uses the replica_label index.
// $level: int, $labels: [label]
UNWIND $labels AS label
MATCH (r:Replica {namespace: $namespace, level: $level, label: label})
RETURN label, collect(DISTINCT r.node_id) AS members

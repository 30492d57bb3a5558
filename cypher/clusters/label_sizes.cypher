// How many nodes of one level carry each label (the size of the cluster one
// level up that the label names), for the cap on a cluster's size. Uses the
// replica_label index; a label no replica carries returns no row (size 0).
// $level: int, $labels: [label]
UNWIND $labels AS label
MATCH (r:Replica {namespace: $namespace, level: $level, label: label})
RETURN label, count(DISTINCT r.node_id) AS size

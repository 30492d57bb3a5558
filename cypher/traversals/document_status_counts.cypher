// How many documents of the namespace are pending, done or failed.
MATCH (d:Document {namespace: $namespace})
RETURN d.status AS status, count(d) AS count

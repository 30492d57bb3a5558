// The namespaces other than $namespace that hold documents, with how many (the hint
// `engramdb ask` and `stats` give when the chosen namespace is empty). The one read
// that looks across namespaces, so it returns namespace names and counts only.
MATCH (d:Document)
WHERE d.namespace <> $namespace
RETURN d.namespace AS namespace, count(d) AS documents
ORDER BY namespace

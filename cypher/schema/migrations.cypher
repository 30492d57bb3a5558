// Schema objects replaced by later versions; dropped before the current schema is applied.
// QA keys became unique per namespace (was: globally).
DROP CONSTRAINT qa_key IF EXISTS;
// The entity full-text index gained the namespace field under a new name.
DROP INDEX entity_text IF EXISTS;

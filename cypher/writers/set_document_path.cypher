// A file's document learns (or updates) the absolute path it was read from: a document made before
// paths were stored, or one whose file moved. $rows: [{id, path}]
UNWIND $rows AS row
MATCH (d:Document {namespace: $namespace, id: row.id})
SET d.path = row.path

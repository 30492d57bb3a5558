// Whether the hierarchy holds a chunk of any document but $doc_id: the first such chunk's id, or
// no row. When there is none, forgetting that document empties the hierarchy, so the stage clears
// it in a few slices instead of walking it level by level (the 5 MB benchmark's delete: 13.4 s
// walking, 6.0 s clearing). It stops at the first hit, so a big namespace answers at once.
// $doc_id: the document being deleted; $stage: the stage name (markers are "<stage>@<version>")
MATCH (c:Chunk {namespace: $namespace})
WHERE c.doc_id <> $doc_id AND any(m IN coalesce(c.stages, []) WHERE m STARTS WITH $stage + '@')
RETURN c.id AS id
LIMIT 1

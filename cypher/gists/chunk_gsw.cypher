// The GSW of some chunks, as the gists stage verbalises it: the entities each
// chunk mentions (with the aliases it knew them by) and its verb phrases with
// their participating entities and QA pairs (which say who is subject, who object).
// The lists come in traversal order; the stage puts them in a fixed order itself.
// $chunk_ids: [chunk id]
UNWIND $chunk_ids AS chunk_id
MATCH (c:Chunk {namespace: $namespace, id: chunk_id})
RETURN c.id AS chunk_id, c.doc_id AS doc_id,
       [(c)-[m:MENTIONS {namespace: $namespace}]->(e:Entity) |
          {id: e.id, name: e.name, type: e.type, surface: m.surface, aliases: coalesce(m.aliases, [])}] AS mentions,
       [(c)-[:HAS_VERB_PHRASE]->(v:VerbPhrase {namespace: $namespace}) |
          {id: v.id, text: v.text,
           entity_ids: [(e:Entity)-[:ROLE_IN]->(v) | e.id],
           qas: [(v)-[q:QA]->(a:Entity) |
                   {id: q.id, question: q.question, question_entity_ids: q.question_entity_ids, answer_id: a.id}]}]
         AS verb_phrases

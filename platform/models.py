"""neomodel classes for engramdb's node types, for SDK users who prefer objects.

The graph schema (constraints, indexes) is owned by ``cypher/schema``, not by
neomodel: never call ``install_all_labels`` on these. Bulk writes go through
the batched UNWIND writers in ``cypher/writers``; these classes are for
browsing, small edits and the write-path benchmark that compares the two.

Relationship types:
  (Document)-[:HAS_CHUNK]->(Chunk)
  (Chunk)-[:MENTIONS]->(Entity)            per-chunk provenance, roles/states there
  (Chunk)-[:HAS_VERB_PHRASE]->(VerbPhrase)
  (Entity)-[:ROLE_IN]->(VerbPhrase)        every entity a verb phrase involves
  (VerbPhrase)-[:QA {id, question, ...}]->(Entity)   one per answer entity
  (Chunk)-[:HAS_GIST]->(Gist), (MemoryPoint)-[:INVOLVES]->(Entity),
  (Cluster)-[:CONTAINS]->(Chunk|Cluster), (QueryTrace)-[:USED]->(MemoryPoint)
"""

from __future__ import annotations

from neomodel import (
    ArrayProperty,
    DateTimeProperty,
    FloatProperty,
    IntegerProperty,
    RelationshipTo,
    StringProperty,
    StructuredNode,
    StructuredRel,
)


class Namespaced(StructuredNode):
    """Every node belongs to exactly one namespace and has an id unique within it."""

    __abstract_node__ = True
    namespace = StringProperty(required=True)
    # neomodel reserves the attribute name `id`; the graph property is still `id`.
    uid = StringProperty(required=True, db_property="id")


class QARel(StructuredRel):
    """A QA pair edge: the question, and the verb phrase → answer entity it points along."""

    qa_id = StringProperty(required=True, db_property="id")
    key = StringProperty(required=True)
    namespace = StringProperty(required=True)
    question = StringProperty(required=True)
    doc_id = StringProperty(required=True)
    chunk_id = StringProperty(required=True)
    question_entity_ids = ArrayProperty(StringProperty(), default=list)


class ProvenanceRel(StructuredRel):
    namespace = StringProperty(required=True)
    doc_id = StringProperty(required=True)


class MentionRel(ProvenanceRel):
    surface = StringProperty()
    type = StringProperty()
    aliases = ArrayProperty(StringProperty(), default=list)
    alias_keys = ArrayProperty(StringProperty(), default=list)
    roles = ArrayProperty(StringProperty(), default=list)
    states = ArrayProperty(StringProperty(), default=list)


class Entity(Namespaced):
    name = StringProperty(required=True)
    normalized_name = StringProperty(required=True)
    type = StringProperty(default="THING")
    aliases = ArrayProperty(StringProperty(), default=list)
    alias_keys = ArrayProperty(StringProperty(), default=list)
    types = ArrayProperty(StringProperty(), default=list)
    roles = ArrayProperty(StringProperty(), default=list)
    states = ArrayProperty(StringProperty(), default=list)
    aliases_text = StringProperty(default="")
    roles_text = StringProperty(default="")
    states_text = StringProperty(default="")
    mention_count = IntegerProperty(default=0)
    role_in = RelationshipTo("VerbPhrase", "ROLE_IN", model=ProvenanceRel)


class VerbPhrase(Namespaced):
    text = StringProperty(required=True)
    doc_id = StringProperty(required=True)
    chunk_id = StringProperty(required=True)
    answers = RelationshipTo(Entity, "QA", model=QARel)


class Chunk(Namespaced):
    doc_id = StringProperty(required=True)
    title = StringProperty()
    status = StringProperty()
    error = StringProperty()
    position = IntegerProperty(required=True)
    text = StringProperty(required=True)
    content_hash = StringProperty()
    mentions = RelationshipTo(Entity, "MENTIONS", model=MentionRel)
    verb_phrases = RelationshipTo(VerbPhrase, "HAS_VERB_PHRASE")
    gist = RelationshipTo("Gist", "HAS_GIST")


class Document(Namespaced):
    title = StringProperty()
    source = StringProperty()
    content_hash = StringProperty()
    status = StringProperty(default="pending", choices={s: s for s in ("pending", "done", "failed")})
    error = StringProperty()
    metadata_json = StringProperty(default="{}")
    updated_at = DateTimeProperty()
    chunks = RelationshipTo(Chunk, "HAS_CHUNK")


class Gist(Namespaced):
    text = StringProperty(required=True)
    doc_id = StringProperty()


class MemoryPoint(Namespaced):
    description = StringProperty(required=True)
    step = IntegerProperty(default=0)
    involves = RelationshipTo(Entity, "INVOLVES")


class Cluster(Namespaced):
    level = IntegerProperty(required=True)
    summary = StringProperty(default="")
    weight = FloatProperty(default=0.0)
    contains_chunks = RelationshipTo(Chunk, "CONTAINS")
    contains_clusters = RelationshipTo("Cluster", "CONTAINS")


class QueryTrace(Namespaced):
    question = StringProperty(required=True)
    created_at = DateTimeProperty()
    used = RelationshipTo(MemoryPoint, "USED")

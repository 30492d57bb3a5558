"""Memory stage ``gists``: a gist memory per chunk and the chunk's embedded facts (CogitoRAG).

What it writes, per chunk:

* a ``Gist`` node, ``(Chunk)-[:HAS_GIST]->(Gist)``, with ``(Gist)-[:MENTIONS]->(Entity)``
  for the entities the gist names. The gist is not embedded: diffusion reaches a gist through
  its passage (CogniRank ranks passages, and each passage brings its gist along), so no
  retrieval step searches gist vectors, and embedding them cost about a sixth of the tokens
  a default ingest embeds (issue 28). Stores written before keep their old gist vectors in
  :data:`GIST_COLLECTION`; they are dropped with their chunk or document;
* one fact per verb phrase of the chunk's GSW, in :data:`FACT_COLLECTION`
  keyed by ``fact:<verb phrase id>`` (stable as long as the chunk's GSW is),
  with ``doc_id``, ``chunk_id``, ``verb_phrase_id``, ``entity_ids`` and the
  fact's text in the payload. Its vector is the normalised mean of its QA pairs' question
  vectors, which the ingest has already stored, so facts cost no model run (issue 28). Facts
  are not extracted a second time: a verb phrase with the entities taking part in it *is* a
  (subject, relation, object) fact, so only its text form is made here.

Fact text. The graph keeps the verb phrase (``is published by``), its
entities (``ROLE_IN``) and its QA pairs, but not which entity is the subject.
The QA pairs tell: a question that contains the verb phrase followed by a
question entity ("Who is the editor of *Journal X*?"), or whose who/what/which
is followed straight by the verb phrase ("Who was born in 1796?"), asks for
the subject, so the answer is the subject; any other question ("When was *X*
published?") names its subject. The majority vote over a verb phrase's QA pairs gives the
subject; the other entities are objects: "Journal X is published by
Wiley-Blackwell." Names are the entities' full names, so pronouns are
already resolved (the extractors never write them into QA pairs).

Gist. Offline, the gist is the chunk's facts verbalised as above, followed by
"X is also known as Y" for every alias the chunk gave an entity (title
aliases made explicit); a chunk without verb phrases gets its text's first
sentences instead, so a gist is never empty. With a chat model
(``context.chat_model``), the model rewrites the passage as a self-contained
gist (our prompt :data:`GIST_PROMPT`; reply ``{"gist": "..."}`` parsed
strictly, one retry that shows the model its mistake). A chunk whose LLM gist
fails gets the offline gist so memory stays usable, but its failure is
recorded in the :class:`StageReport` and the chunk is not marked, so the next
``index`` run asks again. LLM gists are cached by model, prompt version and
the chunk's content (:class:`~engramdb.ingestion.extraction.cache.ExtractionCache`,
a separate file), found through ``context.options``: ``gist_cache`` (an open
cache) or ``cache_dir`` (a folder; the file ``gists.sqlite`` is opened there).

Deleting a document removes its Gist nodes (with their MENTIONS), its gist
and fact vectors and its cached gists.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from engramdb.ingestion.extraction.cache import ExtractionCache, cache_key
from engramdb.ingestion.stages.base import MemoryStage, StageChunk, StageContext, StageReport, register_stage
from engramdb.platform.embedders import normalize_rows
from engramdb.platform.llm import message_text, model_name, parse_json_reply
from engramdb.platform.storage import QA_COLLECTION
from engramdb.platform.vectors import VectorPoint

#: Gist vectors that stores written before gists went unembedded still hold (one per chunk, keyed
#: ``gist:<chunk id>``): nothing searches them; a re-indexed or deleted chunk drops its own.
GIST_COLLECTION = "gists"
#: One point per GSW fact (verb phrase with its entities), keyed by ``fact:<verb phrase id>``.
FACT_COLLECTION = "facts"
#: Gists deleted per transaction. Neo4j's cost per deleted record grows with the transaction: a
#: 5 MB document's 3,485 gists (about 50 mentions each) took 11-12 s of its CPU in one transaction,
#: 8-9 s in slices of 128.
DELETE_SLICE = 128

GIST_PROMPT_VERSION = "gist-v1"
#: Longest LLM gist accepted, as a multiple of the passage length (a longer reply is not a gist).
MAX_GIST_GROWTH = 3.0
MIN_GIST_LIMIT = 1500
#: Offline fallback for a chunk without verb phrases: at most this many leading sentences / characters.
FALLBACK_SENTENCES = 2
FALLBACK_CHARS = 400

GIST_PROMPT = """You turn one passage into a gist memory that a knowledge graph will be built from.

Write the gist as short declarative sentences that together keep every fact the passage states:
people, organisations, places, works, dates, numbers and how they relate.
- Repeat full names instead of pronouns or phrases like "the company" or "the film", so each
  sentence can be read alone.
- If the document title is another name for something in the passage, say so ("X is also known as Y").
- State relations the passage only implies, as long as the passage supports them; add nothing
  the passage does not support and keep dates as precise as the passage gives them.
Reply with JSON only: {"gist": "<the sentences>"}"""


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Mention:
    id: str
    name: str
    type: str
    surface: str
    aliases: tuple[str, ...]


@dataclass(frozen=True)
class QARef:
    question: str
    question_entity_ids: tuple[str, ...]
    answer_id: str
    #: The QA pair's id, which keys its vector in the ``qa`` collection ("" when not known).
    qa_id: str = ""


@dataclass(frozen=True)
class VerbPhraseGSW:
    id: str
    text: str
    entity_ids: tuple[str, ...]
    qas: tuple[QARef, ...]


@dataclass(frozen=True)
class ChunkGSW:
    """What the graph holds for one chunk, as read by ``gists/chunk_gsw``."""

    chunk_id: str
    doc_id: str
    mentions: tuple[Mention, ...]
    verb_phrases: tuple[VerbPhraseGSW, ...]

    def names(self) -> dict[str, str]:
        return {m.id: m.name for m in self.mentions}


@dataclass(frozen=True)
class Fact:
    """A verb phrase with its entities, in text form: what the diffusion strategy retrieves."""

    id: str
    text: str
    verb_phrase_id: str
    subject_ids: tuple[str, ...]
    object_ids: tuple[str, ...]

    @property
    def entity_ids(self) -> tuple[str, ...]:
        return self.subject_ids + self.object_ids


@dataclass
class GistResult:
    text: str
    method: str
    entity_ids: list[str] = field(default_factory=list)
    error: str | None = None


def fact_id(verb_phrase_id: str) -> str:
    return f"fact:{verb_phrase_id}"


def gist_id(chunk_id: str) -> str:
    return f"gist:{chunk_id}"


# --------------------------------------------------------------------------- verbalisation

_ENDS_WITH_PREPOSITION = re.compile(
    r"\b(in|on|at|of|by|for|to|from|with|as|into|onto|about|than|after|before|until|till|since|during|between|"
    r"among|near|under|over|through|within|around|across|against|towards?|behind|beyond|via|per|like|upon)$",
    re.I,
)
_FULL_DATE = re.compile(r"\b\d{1,2}\s+[A-Z][a-z]+\s+\d{3,4}\b|\b[A-Z][a-z]+\s+\d{1,2},\s+\d{3,4}\b")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'“(])")


def _contains(haystack: str, needle: str) -> bool:
    """Whole-word, case-insensitive containment: ``needle`` somewhere in ``haystack`` with no word
    character (``\\w``: a letter, digit or underscore) right before or after it. String search, not a
    regex built per needle: every verb phrase asks this of its QA pairs with each entity name, and
    compiling those patterns (Python's cache holds 512) took a third of the gists stage (36,650
    compilations for a 0.5 MB document's 352 chunks)."""
    if not needle:
        return False
    text, word = haystack.lower(), needle.lower()
    start = text.find(word)
    while start != -1:
        end = start + len(word)
        if (start == 0 or not _is_word_char(text[start - 1])) and (
            end == len(text) or not _is_word_char(text[end])
        ):
            return True
        start = text.find(word, start + 1)
    return False


def _is_word_char(ch: str) -> bool:
    """What the regex class ``\\w`` matches in a str pattern."""
    return ch.isalnum() or ch == "_"


_SUBJECT_WH = re.compile(r"^\s*(?:who|what|which)\b", re.I)
_AUXILIARIES = frozenset(
    {"is", "was", "are", "were", "be", "been", "has", "had", "have", "does", "did", "do"}
)


def _asks_for_subject(qa: QARef, vp_text: str, names: dict[str, str]) -> str | None:
    """The question entity that follows the verb phrase in the question ("Who is the editor of X?" → X).

    Not for a verb phrase that is a bare auxiliary: "What is X?" asks what X is, X is the subject."""
    if vp_text.strip().lower() in _AUXILIARIES:
        return None
    for entity_id in qa.question_entity_ids:
        name = names.get(entity_id)
        if name and _contains(qa.question, f"{vp_text} {name}"):
            return entity_id
    return None


def _wh_is_subject(question: str, vp_text: str) -> bool:
    """Whether the question's wh-word stands where the subject goes: it is followed straight by
    the verb phrase's first words ("Who was born in 1796?" for "was born", "Which company
    offers X?" for "offers"), not by an auxiliary and another subject ("What was X voted?";
    "When was X born?" never counts: when/where/how ask for objects)."""
    words = vp_text.lower().split()[:2]
    if not words or words == words[:1] and words[0] in _AUXILIARIES or not _SUBJECT_WH.match(question):
        return False  # a bare "is" also follows the wh-word of "What is X?", which asks for an object
    after = question.lower().split()[1:]
    return after[: len(words)] == words or after[1 : 1 + len(words)] == words


def order_participants(vp: VerbPhraseGSW, names: dict[str, str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(subject ids, object ids)`` of a verb phrase, by a vote of its QA pairs (see the module docstring)."""
    votes: Counter[str] = Counter()
    appearance: list[str] = []
    for qa in vp.qas:
        asked = [e for e in qa.question_entity_ids if e in names]
        object_id = _asks_for_subject(qa, vp.text, names)
        if object_id is not None or _wh_is_subject(qa.question, vp.text):
            votes[qa.answer_id] += 1
        elif asked:
            votes[asked[0]] += 1
        appearance.extend([*asked, qa.answer_id])
    participants = list(dict.fromkeys([*appearance, *vp.entity_ids]))
    participants = [e for e in participants if e in names]
    if not participants:
        return (), ()
    subject = max(participants, key=lambda e: (votes[e], -participants.index(e)))
    return (subject,), tuple(e for e in participants if e != subject)


def _connector(vp: VerbPhraseGSW, object_id: str, object_name: str) -> str:
    """The preposition a bare verb phrase needs before an object ("was born" + 1914 → "in 1914")."""
    if _ENDS_WITH_PREPOSITION.search(vp.text):
        return ""
    for qa in vp.qas:
        if qa.answer_id != object_id:
            continue
        wh = qa.question.strip().lower()
        if wh.startswith("where"):
            return "in"
        if wh.startswith("when"):
            return "on" if _FULL_DATE.search(object_name) else "in"
    return ""


def verbalise(vp: VerbPhraseGSW, names: dict[str, str]) -> Fact | None:
    """One verb phrase as a short sentence with full entity names; None when it names no known entity."""
    subjects, objects = order_participants(vp, names)
    if not subjects:
        return None
    words = [names[subjects[0]], vp.text.strip()]
    tail = []
    for object_id in objects:
        name = names[object_id]
        if _contains(vp.text, name):
            continue  # "is 1.355": the verb phrase already holds the object
        connector = _connector(vp, object_id, name)
        tail.append(f"{connector} {name}".strip())
    if tail:
        words.append(", ".join(tail))
    sentence = " ".join(w for w in words if w)
    sentence = sentence[:1].upper() + sentence[1:]
    return Fact(fact_id(vp.id), sentence.rstrip(".") + ".", vp.id, subjects, objects)


def chunk_facts(gsw: ChunkGSW) -> list[Fact]:
    """Every verb phrase of the chunk that names a known entity, as a fact, in extraction order."""
    names = gsw.names()
    facts = [verbalise(vp, names) for vp in sorted(gsw.verb_phrases, key=lambda v: _natural_key(v.id))]
    return [f for f in facts if f is not None]


def _natural_key(text: str) -> tuple[Any, ...]:
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


def alias_sentences(gsw: ChunkGSW) -> list[tuple[str, str]]:
    """``(entity id, "X is also known as Y, Z.")`` for each entity the chunk knew by other names."""
    out = []
    for m in gsw.mentions:
        others = [
            a for a in dict.fromkeys([m.surface, *m.aliases]) if a and a.strip().lower() != m.name.lower()
        ]
        if others:
            sentence = f"{m.name} is also known as {', '.join(others)}."
            out.append((m.id, sentence[:1].upper() + sentence[1:]))
    return out


def leading_sentences(text: str, title: str = "") -> str:
    """The first sentences of a passage (the never-empty fallback gist)."""
    sentences = [s.strip() for s in _SENTENCE_END.split(" ".join(text.split())) if s.strip()]
    out = ""
    for sentence in sentences[:FALLBACK_SENTENCES]:
        if out and len(out) + len(sentence) + 1 > FALLBACK_CHARS:
            break
        out = f"{out} {sentence}".strip()
    out = out[:FALLBACK_CHARS].strip() or title.strip()
    return out or "(empty passage)"


def named_entities(text: str, mentions: Sequence[Mention]) -> list[str]:
    """Ids of the chunk's entities whose name, surface form or an alias occurs in ``text``."""
    return [m.id for m in mentions if any(_contains(text, n) for n in {m.name, m.surface, *m.aliases} if n)]


def offline_gist(chunk: StageChunk, gsw: ChunkGSW, facts: Sequence[Fact]) -> GistResult:
    """The chunk's facts and aliases as sentences; its first sentences when it has no facts."""
    if not facts:
        text = leading_sentences(chunk.text, chunk.title)
        return GistResult(text, "offline-lead", named_entities(text, gsw.mentions))
    sentences = list(dict.fromkeys(f.text for f in facts))
    entity_ids = [e for f in facts for e in f.entity_ids]
    for entity, sentence in alias_sentences(gsw):
        sentences.append(sentence)
        entity_ids.append(entity)
    return GistResult(" ".join(sentences), "offline-gsw", list(dict.fromkeys(entity_ids)))


# --------------------------------------------------------------------------- LLM gists


class GistReplyError(ValueError):
    """An LLM reply that is not a usable gist; the message says why."""


def parse_gist_reply(text: str, passage: str) -> str:
    """The gist in a reply ``{"gist": "..."}``: a non-empty string no longer than the passage allows."""
    data = parse_json_reply(text)
    if not isinstance(data, dict):
        raise GistReplyError(f'expected a JSON object {{"gist": "..."}}, got {type(data).__name__}')
    extra = sorted(set(data) - {"gist"})
    if "gist" not in data or extra:
        raise GistReplyError(f"expected exactly the key 'gist', got keys {sorted(data)}")
    gist = data["gist"]
    if not isinstance(gist, str) or not gist.strip():
        raise GistReplyError("'gist' must be a non-empty string")
    gist = " ".join(gist.split())
    limit = max(MIN_GIST_LIMIT, int(MAX_GIST_GROWTH * len(passage)))
    if len(gist) > limit:
        raise GistReplyError(f"the gist has {len(gist)} characters, more than {limit} for this passage")
    return gist


class LLMGister:
    """Asks a chat model for a chunk's gist; cached; one corrective retry."""

    def __init__(self, model: BaseChatModel, namespace: str, cache: ExtractionCache | None, retries: int = 1):
        self.model = model
        self.namespace = namespace
        self.cache = cache
        self.retries = retries
        self.name = f"llm:{model_name(model)}:{GIST_PROMPT_VERSION}"

    def gist(self, chunk: StageChunk) -> tuple[str | None, str | None]:
        """``(gist, None)`` or ``(None, reason)``."""
        key = cache_key(self.name, GIST_PROMPT_VERSION, chunk.title, chunk.text)
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            return json.loads(hit)["gist"], None
        messages: list[BaseMessage] = [
            SystemMessage(GIST_PROMPT),
            HumanMessage(f"Document title: {chunk.title or '(none)'}\n\nPassage:\n{chunk.text}"),
        ]
        error = "no reply"
        for attempt in range(self.retries + 1):
            try:
                reply = self.model.invoke(messages)
            except Exception as exc:  # a provider error becomes this chunk's recorded failure
                return None, f"LLM call failed: {type(exc).__name__}: {exc}"
            if not isinstance(reply, AIMessage):
                reply = AIMessage(content=str(getattr(reply, "content", reply)))
            try:
                gist = parse_gist_reply(message_text(reply), chunk.text)
            except ValueError as exc:
                error = str(exc)
                if attempt < self.retries:
                    messages = [
                        *messages,
                        reply,
                        HumanMessage(f"That reply was not usable: {error}. Reply again."),
                    ]
                continue
            if self.cache is not None:
                self.cache.put(key, self.namespace, chunk.doc_id, json.dumps({"gist": gist}), (0, 0))
            return gist, None
        return None, f"gist failed after {self.retries + 1} attempts: {error}"


# --------------------------------------------------------------------------- the stage


def read_gsw(rows: Sequence[dict[str, Any]]) -> dict[str, ChunkGSW]:
    """Rows of ``gists/chunk_gsw`` as :class:`ChunkGSW`, in an order of their own.

    The query's lists come in the order Neo4j walks the relationships, which differs from one
    build of the same corpus to the next; since subjects are voted with ties broken by order and
    objects are listed in order, that made 12 of 1,890 MuSiQue gists (and their facts' texts)
    differ between two builds. So everything is put in a fixed order here: mentions and
    participants by entity id, QA pairs by their id in extraction order (``…/q2`` before
    ``…/q10``), a QA pair's answers by name ("2010, 2013")."""
    out = {}
    for row in rows:
        mentions = tuple(sorted((
            Mention(m["id"], m["name"], m.get("type") or "THING", m.get("surface") or m["name"],
                    tuple(m.get("aliases") or ()))
            for m in row["mentions"]
        ), key=lambda m: m.id))  # fmt: skip
        names = {m.id: m.name for m in mentions}
        vps = []
        for v in row["verb_phrases"]:
            qas = sorted(v["qas"], key=lambda q: (_natural_key(q.get("id") or ""),
                                                  _natural_key(names.get(q["answer_id"], "")), q["answer_id"]))  # fmt: skip
            vps.append(VerbPhraseGSW(
                v["id"], v["text"] or "", tuple(sorted(v["entity_ids"])),
                tuple(QARef(q["question"] or "", tuple(q["question_entity_ids"] or ()), q["answer_id"], q.get("id") or "")
                      for q in qas),
            ))  # fmt: skip
        out[row["chunk_id"]] = ChunkGSW(row["chunk_id"], row["doc_id"], mentions, tuple(vps))
    return out


@register_stage
class GistStage(MemoryStage):
    """Gist memory and embedded GSW facts per chunk (see the module docstring)."""

    name = "gists"
    version = "2"  # 2: subject/object order also from "Who <verb phrase> ...?" questions
    collections = (GIST_COLLECTION, FACT_COLLECTION)
    summary = "a gist per chunk and one embedded fact per verb phrase (for ask --strategy diffusion)"

    def __init__(self, context: StageContext) -> None:
        super().__init__(context)
        self.gister: LLMGister | None = None
        if context.chat_model is not None:
            self.gister = LLMGister(context.chat_model, context.namespace, _gist_cache(context.options))
        self.concurrency = max(1, int(context.options.get("llm_concurrency", 4)))

    def index_chunks(self, chunks: Sequence[StageChunk]) -> StageReport:
        started = time.perf_counter()
        ctx = self.context
        report = StageReport(self.name, chunks=len(chunks))
        gsws = read_gsw(ctx.graph.read("gists/chunk_gsw", chunk_ids=[c.id for c in chunks]))
        present = [c for c in chunks if c.id in gsws]
        report.failures.extend((c.id, "the chunk is no longer in memory") for c in chunks if c.id not in gsws)
        facts = {c.id: chunk_facts(gsws[c.id]) for c in present}
        gists = self._gists(present, gsws, facts, report)
        self._write(present, gsws, facts, gists)
        report.written = {
            "gists": len(present),
            "facts": sum(len(f) for f in facts.values()),
            "gist_mentions": sum(len(g.entity_ids) for g in gists.values()),
        }
        report.seconds = time.perf_counter() - started
        return report

    def _gists(
        self,
        chunks: Sequence[StageChunk],
        gsws: dict[str, ChunkGSW],
        facts: dict[str, list[Fact]],
        report: StageReport,
    ) -> dict[str, GistResult]:
        offline = {c.id: offline_gist(c, gsws[c.id], facts[c.id]) for c in chunks}
        if self.gister is None:
            return offline
        gister = self.gister
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            replies = list(pool.map(gister.gist, chunks))
        out = {}
        for chunk, (text, error) in zip(chunks, replies, strict=True):
            if text is None:
                report.failures.append((chunk.id, error or "gist failed"))
                fallback = offline[chunk.id]
                out[chunk.id] = GistResult(
                    fallback.text, f"{fallback.method} (LLM gist failed)", fallback.entity_ids
                )
            else:
                out[chunk.id] = GistResult(text, gister.name, named_entities(text, gsws[chunk.id].mentions))
        return out

    def _write(
        self,
        chunks: Sequence[StageChunk],
        gsws: dict[str, ChunkGSW],
        facts: dict[str, list[Fact]],
        gists: dict[str, GistResult],
    ) -> None:
        """Vectors first, then the graph: a crash in between leaves the chunk unmarked, so it is redone."""
        if not chunks:
            return
        ctx = self.context
        ns = ctx.namespace
        embedder = ctx.embedder
        all_facts = [(c, f) for c in chunks for f in facts[c.id]]
        fact_vectors = self._fact_vectors(all_facts, gsws)
        chunk_ids = [c.id for c in chunks]
        # verb phrases a re-extraction dropped must not leave facts behind, nor an older store's
        # gist vector a gist that has changed
        ctx.vectors.delete(FACT_COLLECTION, ns, where={"chunk_id": chunk_ids})
        ctx.vectors.delete(GIST_COLLECTION, ns, where={"chunk_id": chunk_ids})
        ctx.vectors.upsert(FACT_COLLECTION, ns, [
            VectorPoint(fact.id, vector, {
                "doc_id": c.doc_id, "chunk_id": c.id, "verb_phrase_id": fact.verb_phrase_id,
                "entity_ids": list(fact.entity_ids), "subject_ids": list(fact.subject_ids),
                "text": fact.text, "embedder": embedder.name})
            for (c, fact), vector in zip(all_facts, fact_vectors, strict=True)
        ])  # fmt: skip
        rows = [
            {"id": gist_id(c.id), "chunk_id": c.id, "doc_id": c.doc_id, "text": gists[c.id].text,
             "method": gists[c.id].method, "fact_count": len(facts[c.id]), "entity_ids": gists[c.id].entity_ids}
            for c in chunks
        ]  # fmt: skip
        ctx.graph.write("gists/upsert_gists", rows=rows)

    def _fact_vectors(
        self, facts: Sequence[tuple[StageChunk, Fact]], gsws: dict[str, ChunkGSW]
    ) -> np.ndarray:
        """A fact's vector is the normalised mean of its QA pairs' question vectors, already stored.

        Why not embed the fact's text: its QA pairs ask about the same verb phrase and entities
        from each side ("Who published X?", "What is published by Y?"), so their mean points where
        the sentence "X is published by Y." does, and the ingest has just embedded them. Embedding
        the facts again was a sixth of the texts a default ingest ran through the model (issue 28).
        A fact whose QA vectors are not stored (none found: a store written by another path) is
        embedded from its text, as before.
        """
        ctx = self.context
        out = np.zeros((len(facts), ctx.embedder.dim), dtype=np.float32)
        if not facts:
            return out
        verb_phrases = {(c, v.id): v for c, gsw in gsws.items() for v in gsw.verb_phrases}
        qa_ids = [
            sorted({q.qa_id for q in verb_phrases[chunk.id, fact.verb_phrase_id].qas if q.qa_id})
            for chunk, fact in facts
        ]
        stored = ctx.vectors.get_vectors(
            QA_COLLECTION, ctx.namespace, sorted({k for ids in qa_ids for k in ids})
        )
        missing = []
        for i, ids in enumerate(qa_ids):
            found = [stored[k] for k in ids if k in stored]
            if found:
                out[i] = np.mean(np.asarray(found, dtype=np.float32), axis=0)
            else:
                missing.append(i)
        if missing:
            out[missing] = ctx.embedder.embed_documents([facts[i][1].text for i in missing])
        return normalize_rows(out)

    def delete_document(self, doc_id: str, chunk_ids: Sequence[str]) -> None:
        """The document's fact and gist vectors, then its Gist nodes in transactions of
        ``DELETE_SLICE``: each chunk's gist by its id, then any left that carries the document's id.
        A delete cut short leaves the document pending, and the next one takes what is left."""
        ctx = self.context
        ctx.vectors.delete(FACT_COLLECTION, ctx.namespace, where={"doc_id": doc_id})
        ctx.vectors.delete(GIST_COLLECTION, ctx.namespace, where={"doc_id": doc_id})
        if self.gister is not None and self.gister.cache is not None:
            self.gister.cache.delete_document(ctx.namespace, doc_id)
        for start in range(0, len(chunk_ids), DELETE_SLICE):
            part = chunk_ids[start : start + DELETE_SLICE]
            ctx.graph.write("gists/delete_gists", gist_ids=[gist_id(c) for c in part])
        while (
            ctx.graph.write("gists/delete_document_gists", doc_id=doc_id, limit=DELETE_SLICE)[0]["deleted"]
            >= DELETE_SLICE
        ):
            pass


def _gist_cache(options: dict[str, Any]) -> ExtractionCache | None:
    cache = options.get("gist_cache")
    if isinstance(cache, ExtractionCache):
        return cache
    folder = options.get("cache_dir")
    return ExtractionCache(Path(folder) / "gists.sqlite") if folder else None

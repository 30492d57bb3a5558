"""One hop's candidate QA pairs: entity BM25 → attached QA pairs, plus dense QA search.

This is Panini's dual index at work. The sparse side asks Neo4j's full-text
(Lucene BM25) index for entities matching the sub-question and collects the
QA pairs whose questions name them; when the hop's input entity is already
known (the previous hop's answer), its QA pairs are collected directly. The
dense side searches the QA vectors in Qdrant. Candidates are merged by QA id,
and every candidate gets its dense similarity to the sub-question (stored
vectors, no re-embedding), which the reranker uses.

Hops are direction-aware: the entities a hop asks about (its input entities
and the names it spells out) are its *subjects*; the pairs that answer with a
subject are collected as well, and every candidate is labelled forward,
reverse or unanchored relative to the subjects (see
:mod:`engramdb.retrieval.hop_direction`), so a reverse pair is never scored as
a forward match.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from engramdb.ingestion.reconcile import normalize_name
from engramdb.ingestion.writer import namespace_key
from engramdb.platform.graph import Graph
from engramdb.platform.storage import QA_COLLECTION, QAPayload
from engramdb.platform.vectors import VectorStore
from engramdb.retrieval.answer_types import is_date
from engramdb.retrieval.hop_direction import relabel
from engramdb.retrieval.results import QACandidate

_WORD = re.compile(r"\w+")  # Unicode words: "Léopold", "Dvořák", "李小龍", "1867"
# Scripts the full-text analyzer indexes one character at a time (Han ideographs, hiragana): a run of
# them is split into characters here, so the query has as many terms as the analyzer will make of it.
_SINGLE_CHAR_SCRIPT = re.compile(
    r"[\u3040-\u309f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]"
)
_SINGLE_CHAR_SPLIT = re.compile(f"({_SINGLE_CHAR_SCRIPT.pattern})")
_LUCENE_SPECIAL = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/])')
_STOP = frozenset(
    "a an the of in on at to for by with from and or but is are was were be been being do does did what who whom "
    "whose which when where why how many much that this these those it its as into than then there their they he "
    "she his her him i you we our your not no yes".split()
)
#: At most this many distinct terms per query: Lucene refuses a query of more than 1024 clauses, and
#: every term becomes one clause per searched field (4 for entities).
MAX_QUERY_TERMS = 64
_MAX_TERM_CHARS = 100  # longer "words" are not names (and the analyzer would cut them up)


ENTITY_FIELDS = {"name": 2.0, "aliases_text": 2.0, "roles_text": 1.0, "states_text": 1.0}


def query_terms(text: str, limit: int = MAX_QUERY_TERMS) -> list[str]:
    """The distinct search terms of a question, lowercased, at most ``limit`` of them.

    Words of any script count (NFC first, so a decomposed "é" stays inside its word); Han
    and hiragana runs become single characters. When there are more than ``limit``, words
    that look like names (capitalised, with digits, or in a script without case) are kept
    first, each group in order of first occurrence.
    """
    words: list[str] = []
    for word in _WORD.findall(unicodedata.normalize("NFC", text)):
        words.extend(_split_single_char_scripts(word))
    first_form: dict[str, str] = {}
    for word in words:
        term = word.lower()
        if term not in _STOP and len(term) <= _MAX_TERM_CHARS and term.strip("_"):
            first_form.setdefault(term, word)
    names = [t for t, w in first_form.items() if _looks_like_name(w)]
    others = [t for t, w in first_form.items() if not _looks_like_name(w)]
    keep = set((names + others)[:limit])
    return [t for t in first_form if t in keep]


def _split_single_char_scripts(word: str) -> list[str]:
    if not _SINGLE_CHAR_SCRIPT.search(word):
        return [word]
    return [piece for piece in _SINGLE_CHAR_SPLIT.split(word) if piece]


def _looks_like_name(word: str) -> bool:
    first = word[0]
    return (
        first.isupper()
        or any(ch.isdigit() for ch in word)
        or (first.isalpha() and first.lower() == first.upper())
    )


def lucene_escape(term: str) -> str:
    """A term with every Lucene query-syntax character escaped, so it can only ever be a term."""
    return _LUCENE_SPECIAL.sub(r"\\\1", term)


def lucene_query(text: str, namespace: str, fields: dict[str, float] | None = None) -> str | None:
    """A safe Lucene query over a full-text index: escaped word terms only, restricted to one namespace.

    The namespace is matched through ``namespace_key`` (one a-z word the analyzer cannot split, see
    :func:`engramdb.ingestion.writer.namespace_key`), so namespaces with ``_``, ``-`` or ``.`` and
    case-only differences stay apart inside Lucene. Terms are Unicode words, lowercased (so ``AND``,
    ``OR``, ``NOT`` are plain words) and escaped, so no user text can form query syntax; at most
    :data:`MAX_QUERY_TERMS` of them. Returns None when the text has no searchable words.
    """
    terms = query_terms(text)
    if not terms:
        return None
    group = " ".join(lucene_escape(t) for t in terms)
    clauses = " ".join(
        f"{name}:({group})" + (f"^{boost:g}" if boost != 1.0 else "")
        for name, boost in (fields or ENTITY_FIELDS).items()
    )
    return f"+namespace_key:{namespace_key(namespace)} +({clauses})"


@dataclass(frozen=True)
class HopRequest:
    """One instantiated sub-question: its text, its embedding, and the entities it is about."""

    query: str
    vector: np.ndarray
    input_entity_ids: tuple[str, ...] = ()
    input_names: tuple[str, ...] = ()


@dataclass(frozen=True)
class HopCandidates:
    """What one hop retrieved: its candidates (each labelled with its direction) and its subjects,
    the entities it asks about (substituted from earlier hops, or named in the sub-question)."""

    candidates: list[QACandidate]
    subject_ids: tuple[str, ...] = ()
    subject_names: tuple[str, ...] = ()


@dataclass(frozen=True)
class HopSettings:
    entity_top_k: int = 20  # BM25 entities per hop (paper default)
    qa_per_entity: int = 40  # QA pairs collected per entity
    dense_top_k: int = 30  # dense QA hits per hop


class HopRetriever:
    """Collects the candidate QA pairs for one instantiated sub-question."""

    def __init__(self, graph: Graph, vectors: VectorStore, settings: HopSettings | None = None) -> None:
        self.graph = graph
        self.vectors = vectors
        self.settings = settings or HopSettings()

    def retrieve(
        self, query: str, query_vector: np.ndarray, input_entity_ids: Sequence[str] = ()
    ) -> list[QACandidate]:
        return self.retrieve_many([HopRequest(query, query_vector, tuple(input_entity_ids))])[0]

    def entity_ids_by_name(self, names: Sequence[str]) -> dict[str, str]:
        """``{name: entity id}`` for the names memory holds an entity of (matched as reconciliation
        matches names: case, accents, articles and punctuation aside)."""
        keys = {normalize_name(n): n for n in names if normalize_name(n)}
        if not keys:
            return {}
        out: dict[str, str] = {}
        for row in self.graph.read("traversals/entities_by_normalized_name", keys=list(keys)):
            out.setdefault(keys[row["key"]], row["id"])
        return out

    def retrieve_many(self, requests: Sequence[HopRequest]) -> list[list[QACandidate]]:
        """Candidates for several instantiated sub-questions (the beams of one hop) in a few round trips."""
        return [hop.candidates for hop in self.retrieve_hops(requests)]

    def retrieve_hops(self, requests: Sequence[HopRequest]) -> list[HopCandidates]:
        """Candidates and subjects for several instantiated sub-questions, direction-aware.

        A hop's subjects are its input entities plus the entities whose name the
        sub-question spells out (found by BM25, confirmed by the name occurring in
        the text). Around the subjects, the pairs that *answer* with them are
        collected too, labelled ``reverse``, so the rerankers can recognise the
        reverse reading of a fact (:mod:`engramdb.retrieval.hop_direction`).
        """
        merged: list[dict[str, QACandidate]] = [{} for _ in requests]
        bm25: list[dict[str, float]] = [{} for _ in requests]
        named: list[dict[str, str]] = [{} for _ in requests]
        unmatched = [bool(name_spans(r.query)) for r in requests]  # until BM25 finds one of its names
        queries = []
        for i, request in enumerate(requests):
            lucene = lucene_query(request.query, self.graph.namespace)
            if lucene is not None:
                queries.append({"i": i, "lucene": lucene})
        if queries:
            rows = self.graph.read(
                "traversals/entity_bm25_named", queries=queries, limit=self.settings.entity_top_k
            )
            by_request: dict[int, list[dict[str, Any]]] = {}
            for row in rows:
                bm25[row["i"]][row["id"]] = row["score"]
                by_request.setdefault(row["i"], []).append(row)
            for i, found in by_request.items():
                named[i], unmatched[i] = named_entities(requests[i].query, found)
        subjects = [list(dict.fromkeys([*r.input_entity_ids, *named[i]])) for i, r in enumerate(requests)]
        wanted = [list(dict.fromkeys([*subjects[i], *bm25[i]])) for i in range(len(requests))]
        all_ids = list(dict.fromkeys(e for ids in wanted for e in ids))
        reverse_ids = list(dict.fromkeys(e for ids in subjects for e in ids))
        by_entity: dict[tuple[str, str], list[dict[str, Any]]] = {}
        if all_ids:
            rows = self.graph.read(
                "traversals/qa_pairs_around_entities", entity_ids=all_ids, reverse_ids=reverse_ids,
                limit=self.settings.qa_per_entity * (len(all_ids) + len(reverse_ids)),
                per_entity=self.settings.qa_per_entity,
            )  # fmt: skip
            for row in rows:
                by_entity.setdefault((row["via_entity"], row["side"]), []).append(row)
        for i, request in enumerate(requests):
            for entity_id in wanted[i]:
                via = "entity" if entity_id in request.input_entity_ids else "bm25"
                for row in by_entity.get((entity_id, "forward"), ()):
                    cand = _from_row(row, bm25[i].get(entity_id), via)
                    merged[i][cand.qa_id] = _merge(merged[i].get(cand.qa_id), cand)
            for entity_id in subjects[i]:
                for row in by_entity.get((entity_id, "reverse"), ()):
                    cand = _from_row(row, None, "reverse")
                    merged[i][cand.qa_id] = _merge(merged[i].get(cand.qa_id), cand)
            if self.settings.dense_top_k > 0:
                hits = self.vectors.search(
                    QA_COLLECTION, self.graph.namespace, request.vector, self.settings.dense_top_k
                )
                for hit in hits:
                    cand = _from_payload(hit.key, hit.payload, hit.score)
                    merged[i][cand.qa_id] = _merge(merged[i].get(cand.qa_id), cand)
        missing = list(dict.fromkeys(q for m in merged for q, c in m.items() if c.dense_score is None))
        stored = self.vectors.get_vectors(QA_COLLECTION, self.graph.namespace, missing) if missing else {}
        out: list[HopCandidates] = []
        for i, request in enumerate(requests):
            for qa_id, cand in merged[i].items():
                if cand.dense_score is None and qa_id in stored:
                    merged[i][qa_id] = replace(cand, dense_score=float(np.dot(stored[qa_id], request.vector)))
            names = list(dict.fromkeys([*request.input_names, *named[i].values()]))
            labelled = relabel(
                list(merged[i].values()), subjects[i], unanchored=unmatched[i] and not subjects[i]
            )
            labelled = [name_variant_forward(c, names) for c in labelled]
            out.append(HopCandidates(labelled, tuple(subjects[i]), tuple(names)))
        return out


def name_variant_forward(cand: QACandidate, names: Sequence[str]) -> QACandidate:
    """An unanchored pair whose question spells a longer form of a subject's name ("When was
    Charles Reser Frank born?" for a hop about "Charles Frank") is about the same one as far as
    anyone can tell: memory holds the two names as two entities only because nothing joined them.
    Names of two words or more only, their words in order with at most two between and the last
    word last; an initial stands for any word it abbreviates ("D. Ross Lederman" for "David Ross
    Lederman")."""
    if cand.direction != "unanchored":
        return cand
    for name in names:
        words = name.split()
        if len(words) < 2:
            continue
        gap = r"(?:\s+\S+){0,2}\s+"
        # the surname stays last: "Scott Alexander Young" is not a longer form of "Scott Alexander"
        pattern = r"(?<!\w)" + gap.join(_word_or_initial(w) for w in words) + r"(?!\w)(?!\s+[A-Z])"
        if re.search(pattern, cand.question):
            return replace(cand, direction="forward")
    return cand


def _word_or_initial(word: str) -> str:
    """A name word as a pattern; an initial ("D.") also matches a word it abbreviates ("David")."""
    if re.fullmatch(r"[A-Z]\.", word):
        return rf"(?:{re.escape(word)}|{word[0]}[a-z]+)"
    return re.escape(word)


_NAME_CHARS = re.compile(r"[A-Z0-9]")
#: Entity types whose names are proper names whatever their case in a question.
_PROPER_TYPES = frozenset({"PLACE", "PERSON", "ORG", "NORP", "EVENT"})
_CAP_WORD = r"(?:[A-Z0-9\u00c0-\u024f][\w'’.&-]*)"
_CONNECT = r"(?:of|the|and|de|del|la|le|du|da|von|van|der|den|y|&|on|upon|in|for|at)"
_NAME_SPAN = re.compile(rf"{_CAP_WORD}(?:\s+(?:{_CONNECT}\s+)*{_CAP_WORD})*")
_QUOTED_SPAN = re.compile(r"[\"“]([^\"”]{2,})[\"”]")
_NOT_A_NAME = frozenset(
    "what who whom whose which when where why how is are was were do does did has have had can could will "
    "would the a an in on at of for from to by with as and or name list give".split()
)


def name_spans(query: str) -> list[str]:
    """The names a question spells: quoted titles and runs of capitalised words ("Henrik Ibsen",
    "Journal of Psychotherapy Integration"), without a leading question word, article or
    preposition, and without dates ("May 1990") or bare numbers."""
    text = unicodedata.normalize("NFC", query)
    spans = [m.group(1).strip() for m in _QUOTED_SPAN.finditer(text)]
    for match in _NAME_SPAN.finditer(_QUOTED_SPAN.sub(" ", text)):
        words = match.group(0).split()
        while words and (words[0].lower() in _NOT_A_NAME or words[0].lower() in _CONNECT_WORDS):
            words.pop(0)
        while words and words[-1].lower() in _CONNECT_WORDS:
            words.pop()
        span = " ".join(words).strip(".,;:")
        if span and not is_date(span) and not re.fullmatch(r"[\d.,]+", span) and _NAME_CHARS.search(span):
            spans.append(span)
    return list(dict.fromkeys(spans))


_CONNECT_WORDS = frozenset("of the and de del la le du da von van der den y & on upon in for at".split())


def _name_key(text: str) -> str:
    return normalize_name(text)


def named_entities(query: str, found: Sequence[dict[str, Any]]) -> tuple[dict[str, str], bool]:
    """The hop's named subjects among its BM25 hits, and whether it names something memory lacks.

    Returns ``({entity id: name}, unmatched)``. An entity is a subject when its name or an
    alias (with a capital letter or a digit: a common noun such as "play" is not a subject)
    occurs in the question as whole words with its own capitals (any case for a place, person or
    organisation, except a lower-case word right after a wh-word or article: "Which river ..."
    names no entity called "River"), equals a name the question spells
    (:func:`name_spans`, compared as reconciliation compares names), or contains such a name
    as its last words ("Ibsen" for "Henrik Ibsen"). A name inside a longer matched name
    ("Eyes" in "Big Eyes") does not count. ``unmatched`` is True when the question spells
    names and none of them is an entity in memory: then nothing retrieved is about what the
    question asks.
    """
    text = unicodedata.normalize("NFC", query)
    low = text.lower()
    spans = name_spans(text)
    span_keys = {_name_key(s) for s in spans} - {""}
    hits: list[tuple[int, int, str, str]] = []
    for row in found:
        for name in [row.get("name") or "", *(row.get("aliases") or [])]:
            name = unicodedata.normalize("NFC", name.strip())
            if len(name) < 2 or not _NAME_CHARS.search(name):
                continue
            key = _name_key(name)
            # As written ("Director" is no name in "the director of"); a place, person or
            # organisation also in lower case ("when did italy enter ...").
            flags = re.IGNORECASE if (row.get("type") or "") in _PROPER_TYPES else 0
            match = re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", text, flags)
            if match is not None and _common_noun_use(text, match):
                match = None
            if match is not None:
                hits.append((match.start(), match.end(), row["id"], name))
                break
            tail = next(
                (k for k in span_keys if k and (key == k or (len(k) >= 4 and key.endswith(" " + k)))), None
            )
            if tail is not None:
                at = low.find(tail.split()[0])
                hits.append((max(at, 0), max(at, 0) + len(tail), row["id"], name))
                break
    out: dict[str, str] = {}
    for start, end, entity_id, name in hits:
        inside_longer = any(s <= start and end <= e and (e - s) > (end - start) for s, e, _, _ in hits)
        if not inside_longer:
            out.setdefault(entity_id, name)
    return out, bool(spans) and not out


#: Words before which a lower-case word is a common noun in use ("which river", "the state"), never a
#: name typed in lower case ("when did italy enter ...").
_DETERMINERS = frozenset("which what whose the a an this that these those its his her their".split())


def _common_noun_use(text: str, match: re.Match[str]) -> bool:
    """Whether a case-blind match is the question's own common noun: written in lower case and
    right after a wh-word or determiner ("Which river is in India?" does not name an entity
    called "River", whatever memory holds)."""
    if match.group(0) != match.group(0).lower():
        return False
    before = re.findall(r"[\w'’]+", text[: match.start()].lower())
    return bool(before) and before[-1] in _DETERMINERS


def _from_row(row: dict[str, Any], bm25: float | None, via: str) -> QACandidate:
    return QACandidate(
        qa_id=row["qa_id"], question=row["question"], answer_ids=tuple(row["answer_ids"]),
        answer_names=tuple(row["answer_names"]), answer_types=tuple(row["answer_types"]),
        question_entity_ids=tuple(row["question_entity_ids"]), doc_id=row["doc_id"], chunk_id=row["chunk_id"],
        verb_phrase=row["verb_phrase"] or "", verb_phrase_id=row.get("verb_phrase_id") or "", bm25_score=bm25,
        via=(via,),
    )  # fmt: skip


def _from_payload(key: str, payload: dict[str, Any], score: float) -> QACandidate:
    p = QAPayload.from_payload(payload)
    return QACandidate(
        qa_id=key, question=p.question, answer_ids=tuple(p.answer_entity_ids), answer_names=tuple(p.answer_names),
        answer_types=tuple(p.answer_types or ()), question_entity_ids=tuple(p.question_entity_ids),
        doc_id=p.doc_id, chunk_id=p.chunk_id, verb_phrase_id=p.verb_phrase_id or "", dense_score=float(score),
        via=("dense",),
    )  # fmt: skip


def _merge(old: QACandidate | None, new: QACandidate) -> QACandidate:
    if old is None:
        return new
    return replace(
        old,
        dense_score=old.dense_score if old.dense_score is not None else new.dense_score,
        bm25_score=max(filter(None, [old.bm25_score, new.bm25_score]), default=None),
        verb_phrase=old.verb_phrase or new.verb_phrase,
        verb_phrase_id=old.verb_phrase_id or new.verb_phrase_id,
        answer_types=old.answer_types or new.answer_types,
        via=tuple(dict.fromkeys(old.via + new.via)),
    )

"""Which way a QA pair reads relative to a hop: forward, reverse, or about something else.

Every fact is stored as QA pairs in both directions ("What is the capital of
Poland? → Warsaw" and "What is Warsaw the capital of? → Poland"), and each
pair records which entities it asks *about* (``question_entity_ids``) and which
it *answers* (``answer_ids``). A hop asks about its *input* entities: the ones
substituted from earlier hops and the names the sub-question itself mentions.

* **forward** — the pair asks about an input entity: it can answer the hop;
* **reverse** — an input entity is the pair's *answer*: the pair runs the
  other way ("Who was born in Warsaw? → Marie Curie" for a hop about Marie
  Curie) and can only lead back where the chain came from;
* **unanchored** — the pair is about neither: at best the same relation about
  another entity (what a dense search finds for a name memory never saw);
* ``""`` — the hop has no known input entity, so nothing can be said. (A hop
  that spells a name memory has no entity for has nothing forward: all its
  candidates are unanchored.)

Entity ids alone miss one case. "What is the capital of Warsaw?" and the
stored "What is Warsaw the capital of? → Poland" both ask about Warsaw, yet
the relation runs the other way: the hop's wording is that of the *twin*
"What is the capital of Poland? → Warsaw", in which Warsaw is the answer. So
a forward pair whose twin (same verb phrase, the two entities swapped) reads
more like the hop than the pair itself is a **reverse reading** and scored as
reverse. Readings are compared on the questions with the subject replaced by
a slot, word order included ("capital of §" vs "§ the capital of"), so
symmetric relations ("spouse of §" both ways) stay forward.

Both rerankers apply :func:`direction_factors`; the hop retriever labels the
candidates (:func:`label`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from engramdb.retrieval.results import QACandidate

FORWARD = "forward"
REVERSE = "reverse"
REVERSE_READING = "reverse-reading"
UNANCHORED = "unanchored"

#: Score multipliers. A reverse pair can never answer the hop, so it falls below
#: any plausible forward pair. An unanchored pair is about another entity: it can
#: only be right when entity matching failed, so it keeps half its score.
REVERSE_FACTOR = 0.35
UNANCHORED_FACTOR = 0.5
#: A twin must read this much more like the hop before the pair counts as reverse, and read
#: at least this much like it at all (two poor readings say nothing about direction).
READING_MARGIN = 0.1
MIN_TWIN_READING = 0.5

SLOT = "§"
_TOKEN = re.compile(r"§|[a-z0-9]+")
_DROP = frozenset({"a", "an", "the"})


def label(candidate: QACandidate, input_ids: Iterable[str]) -> str:
    """The entity-level direction of a candidate for a hop about ``input_ids``."""
    inputs = set(input_ids)
    if not inputs:
        return ""
    asks = bool(inputs & set(candidate.question_entity_ids))
    answers = bool(inputs & set(candidate.answer_ids))
    if asks:
        return FORWARD
    if answers:
        return REVERSE
    return UNANCHORED


def relabel(
    candidates: Sequence[QACandidate], input_ids: Iterable[str], *, unanchored: bool = False
) -> list[QACandidate]:
    """The candidates with their ``direction`` set for a hop about ``input_ids``; with
    ``unanchored`` (the hop names something memory has no entity for) every one is unanchored."""
    if unanchored:
        return [replace(c, direction=UNANCHORED) for c in candidates]
    inputs = tuple(input_ids)
    return [replace(c, direction=label(c, inputs)) for c in candidates]


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def masked(text: str, names: Iterable[str]) -> list[str]:
    """The question's words (lowercased, stemmed, articles dropped) with each name as one slot."""
    out = text.lower()
    for name in sorted({n.strip().lower() for n in names if n and n.strip()}, key=len, reverse=True):
        out = re.sub(r"(?<!\w)" + re.escape(name) + r"(?!\w)", f" {SLOT} ", out)
    return [_stem(t) if t != SLOT else t for t in _TOKEN.findall(out) if t not in _DROP]


def reading_similarity(a: Sequence[str], b: Sequence[str]) -> float:
    """Order-aware likeness of two masked questions: words and word pairs (with the slot) shared."""
    if not a or not b:
        return 0.0
    ua, ub = set(a), set(b)
    ba = set(zip(["^", *a], [*a, "$"], strict=True))
    bb = set(zip(["^", *b], [*b, "$"], strict=True))
    return 0.5 * len(ua & ub) / len(ua | ub) + 0.5 * len(ba & bb) / len(ba | bb)


def _twins(candidate: QACandidate, pool: Sequence[QACandidate]) -> list[QACandidate]:
    """Reverse pairs of the same fact: the entities swapped, from the same verb phrase when known."""
    answers, asked = set(candidate.answer_ids), set(candidate.question_entity_ids)
    out = []
    for other in pool:
        if other.qa_id == candidate.qa_id or other.direction != REVERSE:
            continue
        if not (answers & set(other.question_entity_ids)) or not (asked & set(other.answer_ids)):
            continue
        if (
            candidate.verb_phrase_id
            and other.verb_phrase_id
            and candidate.verb_phrase_id != other.verb_phrase_id
        ):
            continue
        out.append(other)
    return out


def directions(query: str, candidates: Sequence[QACandidate], input_names: Sequence[str]) -> dict[str, str]:
    """Each candidate's direction for the hop ``query``: its label, or :data:`REVERSE_READING` for a
    forward pair whose twin reads more like the hop than the pair itself."""
    out = {c.qa_id: c.direction for c in candidates}
    reverse_pool = [c for c in candidates if c.direction == REVERSE]
    if not reverse_pool or not input_names:
        return out
    hop = masked(query, input_names)
    for cand in candidates:
        if cand.direction != FORWARD:
            continue
        twins = _twins(cand, reverse_pool)
        if not twins:
            continue
        own = reading_similarity(hop, masked(cand.question, input_names))
        twin = max(reading_similarity(hop, masked(t.question, cand.answer_names)) for t in twins)
        if twin >= MIN_TWIN_READING and twin > own + READING_MARGIN:
            out[cand.qa_id] = REVERSE_READING
    return out


def factor(direction: str) -> float:
    """The score multiplier of a direction."""
    if direction in (REVERSE, REVERSE_READING):
        return REVERSE_FACTOR
    if direction == UNANCHORED:
        return UNANCHORED_FACTOR
    return 1.0


def direction_factors(
    query: str, candidates: Sequence[QACandidate], input_names: Sequence[str]
) -> dict[str, tuple[str, float]]:
    """``{qa_id: (direction, multiplier)}`` for the candidates of one hop (see the module docstring)."""
    return {qa_id: (d, factor(d)) for qa_id, d in directions(query, candidates, input_names).items()}

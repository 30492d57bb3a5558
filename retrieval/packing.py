"""One packer for every strategy: the most useful evidence that fits a token budget.

Why one: a reader given 256 tokens is served by whatever holds the answer in
256 tokens, whether QA pairs, source sentences, gists or plain passages. Each
strategy ranks its candidate units (its own structures first, then the
passages they came from, then passages found by dense search for the question
and its sub-questions), and this packer fills the budget from that ranking, so
a strategy never does worse than passages merely for lack of room, and every
strategy is measured with the same ruler (:func:`engramdb.retrieval.evidence.text_tokens`).

Rules, in order of the ranking:

* a unit whose words are already in the chosen evidence is skipped (a source
  sentence inside a chosen passage, a gist restating its passage);
* a unit that fits is taken whole;
* a passage (or any multi-sentence unit) that does not fit is shortened to its
  best sentences for the question: sentences are never cut, the title line is
  kept, and sentences already chosen elsewhere are left out;
* a unit that cannot fit even shortened is skipped, and smaller ones after it
  may still fill the room left;
* a strategy's reserve (diffusion's best facts, cluster's summaries) goes where
  the first unit would have to be shortened (:func:`with_reserve`).

The result keeps the ranking's order, which is the reading order the strategy
chose (for chain search: the best chain hop by hop, each pair with its
sentence, then other chains, then passages).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from engramdb.ingestion.documents import split_sentences
from engramdb.ingestion.stages.clusters import CLIP_MARK
from engramdb.retrieval.evidence import dense_passage_rows, passage_evidence, text_tokens
from engramdb.retrieval.io_pool import IO_POOL
from engramdb.retrieval.rerankers import content_words
from engramdb.retrieval.results import Evidence

if TYPE_CHECKING:
    from engramdb.retrieval.strategy import AskContext

#: Below this many tokens left, nothing useful fits (a QA pair alone is about 15).
MIN_ROOM = 6
#: A unit adds nothing when at least this share of its content words is already in the evidence.
REDUNDANT_SHARE = 0.9
#: Units that may be cut down to their best sentences; others (a QA pair, a sentence) are atomic.
SHORTENABLE = frozenset({"passage", "gist", "cluster", "memory_point"})
#: What stands between two kept sentences of a shortened passage that were not adjacent.
ELISION = " … "
_SPACE = re.compile(r"\s+")


def tokens(text: str) -> int:
    return text_tokens([text])[0]


def pack(units: Sequence[Evidence], budget: int, focus: Iterable[str] = ()) -> list[Evidence]:
    """The units that fit ``budget`` tokens, in their given order (see the module docstring).

    ``focus`` is what the evidence is for (the question, sub-questions, answers found so
    far): it decides which sentences of a passage are kept when it has to be shortened.
    """
    wanted = set().union(*(content_words(f) for f in focus)) if focus else set()
    sizes = text_tokens([u.text for u in units])  # one tokenizer call for the whole ranking
    chosen: list[Evidence] = []
    seen_text: list[str] = []
    seen_words: set[str] = set()
    room = budget
    for unit, size in zip(units, sizes, strict=True):
        if room < MIN_ROOM:
            break
        flat = _flat(unit.text)
        if not flat or any(flat in s for s in seen_text):
            continue
        words = content_words(unit.text)
        if words and len(words & seen_words) >= REDUNDANT_SHARE * len(words):
            continue
        candidate = unit
        if size > room or _repeats_a_sentence(unit, seen_text):
            if unit.kind not in SHORTENABLE:
                continue
            candidate = shorten(unit, room, wanted, seen_text)
            if candidate is None:
                continue
            size = tokens(candidate.text)
        chosen.append(candidate)
        seen_text.append(flat if candidate is unit else _flat(candidate.text))
        seen_words |= words if candidate is unit else content_words(candidate.text)
        room -= size
    return chosen


def shorten(unit: Evidence, room: int, wanted: set[str], seen_text: Sequence[str] = ()) -> Evidence | None:
    """``unit`` cut down to whole sentences that fit ``room`` tokens, the ones sharing most words
    with ``wanted`` first, kept in their order; None when not even one sentence fits. A title line
    (the first line of a passage) stays, as it names what the sentences are about."""
    title, body = _title_and_body(unit)
    every = _pieces(unit, body)
    sentences = [s for s in every if not _already_given(s, seen_text)]
    if not sentences:
        return None
    head = f"{title}\n" if title else ""
    room -= tokens(head) if head else 0
    costs = [n + 1 for n in text_tokens(sentences)]  # a joining space or elision mark

    def value(i: int) -> tuple[int, int]:
        return (len(wanted & content_words(sentences[i])), -i)

    kept: list[int] = []
    for i in sorted(range(len(sentences)), key=value, reverse=True):
        if costs[i] <= room:
            kept.append(i)
            room -= costs[i]
    if not kept:
        return None
    kept.sort()
    parts = [sentences[kept[0]]]
    for before, i in zip(kept, kept[1:], strict=False):
        parts.append((" " if i == before + 1 else ELISION) + sentences[i])
    text = head + "".join(parts)
    if len(kept) == len(sentences) == len(every):
        return replace(unit, text=text)
    return replace(unit, text=text, metadata={**unit.metadata, "shortened": True})


def _pieces(unit: Evidence, body: str) -> list[str]:
    """What a unit may be cut into: its sentences; a memory point's facts ("Who founded X? Y.")
    stay whole, as a reader given "1712. … 1663." has answers to no question it can see."""
    sentences = split_sentences(body)
    if unit.kind != "memory_point":
        return sentences
    out: list[str] = []
    for sentence in sentences:
        if out and out[-1].endswith("?") and not sentence.endswith("?"):
            out[-1] = f"{out[-1]} {sentence}"
        else:
            out.append(sentence)
    return out


def _title_and_body(unit: Evidence) -> tuple[str, str]:
    """A passage's title line and its text; other units are all body."""
    if unit.kind == "passage" and "\n" in unit.text:
        title, body = unit.text.split("\n", 1)
        if title == (unit.metadata.get("title") or title):
            return title, body
    return "", unit.text


def _repeats_a_sentence(unit: Evidence, seen_text: Sequence[str]) -> bool:
    """A passage, gist, summary or memory point holding a sentence already chosen (a chain's source
    sentence, a passage a cluster summary quotes) drops that sentence."""
    if unit.kind not in SHORTENABLE or not seen_text:
        return False
    return any(_already_given(s, seen_text) for s in _pieces(unit, _title_and_body(unit)[1]))


def _already_given(sentence: str, seen_text: Sequence[str]) -> bool:
    """Whether ``sentence`` is inside the chosen evidence; a sentence a summary clipped ("…with
    just 6 days with...") counts when the part it kept is."""
    flat = _flat(sentence)
    if flat.endswith(CLIP_MARK):
        flat = flat[: -len(CLIP_MARK)].rstrip()
    return bool(flat) and any(flat in t for t in seen_text)


def _flat(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


#: Passages fetched by dense search to end every strategy's ranking (more than any budget holds).
PASSAGE_POOL = 8
#: Compact units a strategy's structure yields; they lead the ranking. Passage-like units (passages,
#: gists, cluster summaries) are interleaved with the dense passages instead.
COMPACT_KINDS = frozenset({"qa_pair", "sentence", "fact", "memory_point"})


#: Share of the budget a strategy's leading compact units may fill before passages start (its surest
#: group always leads, whatever its size).
LEAD_SHARE = 0.5


def interleave(*rankings: Sequence[Evidence]) -> list[Evidence]:
    """Rankings taken in turn, one unit each (the first ranking leads), each unit once by id."""
    out: list[Evidence] = []
    seen: set[str] = set()
    for i in range(max((len(r) for r in rankings), default=0)):
        for ranking in rankings:
            if i < len(ranking) and ranking[i].id not in seen:
                seen.add(ranking[i].id)
                out.append(ranking[i])
    return out


def passage_tier(
    context: AskContext, question: str, query: Sequence[float] | None = None
) -> Future[list[dict[str, Any]]]:
    """Start the search for the budget's passage tier (dense passages for ``question``, whose
    vector is ``query`` when the strategy embedded it already) on the I/O pool, so it runs while
    the strategy searches its own structures; hand the future to :func:`fill_budget`. Its result
    is chunk rows with their documents, which also cite the passages without another read. Pass
    the vector where there is one: two threads embedding the same question at once was measured
    to cost more than the overlap saves on two cores."""
    return IO_POOL.submit(_dense_rows, context, question, query)


def _dense_rows(
    context: AskContext, question: str, query: Sequence[float] | None = None
) -> list[dict[str, Any]]:
    return dense_passage_rows(context.graph, context.vectors, context.embedder, question, PASSAGE_POOL, query)


def fill_budget(
    context: AskContext,
    budget: int,
    own: Sequence[Evidence],
    queries: Sequence[str],
    focus: Iterable[str] = (),
    passages: Sequence[Evidence] = (),
    tier: Future[list[dict[str, Any]]] | Sequence[dict[str, Any]] | None = None,
    lead: int | None = None,
    reserve: Sequence[Evidence] = (),
    dense_share: float = 0.0,
) -> list[Evidence]:
    """A strategy's ranking packed into ``budget`` tokens: its leading units (:func:`split_lead`)
    first, in its order; then passages found by plain similarity (dense search for the question,
    ``queries[0]``) taken in turn with the rest of the strategy's ranking (its other units and the
    ``passages`` it reached), similarity first. So the surest passage by similarity is always there
    when a passage fits, and each one after it is matched by something the strategy's structure
    found. The other ``queries`` (sub-questions) and ``focus`` choose the sentences of a passage
    that must be shortened. Dense search for the sub-questions too was measured: the same
    answer-in-evidence on both own question sets, 20-30 ms more per ask. ``tier`` is the dense search already started by
    :func:`passage_tier` for ``queries[0]``, or its rows when the strategy found them itself.
    ``reserve`` units take the place of the first unit that would be cut (:func:`with_reserve`);
    ``dense_share`` is the share of the budget left after the leading units that the surest passages
    by similarity fill before the turns begin (:func:`turn_order`)."""
    if tier is None:
        rows = _dense_rows(context, queries[0])
    elif isinstance(tier, Future):
        rows = tier.result()
    else:
        rows = tier
    found = passage_evidence(rows)
    first, rest = split_lead(own, budget, lead)
    order = turn_order(first, found, [*rest, *passages], budget, dense_share)
    packed = pack(order, budget, focus=[*queries, *focus])
    return with_reserve(order, packed, reserve, budget, [*queries, *focus])


def turn_order(
    first: Sequence[Evidence],
    found: Sequence[Evidence],
    rest: Sequence[Evidence],
    budget: int,
    dense_share: float = 0.0,
) -> list[Evidence]:
    """The reading order to pack: a strategy's leading units, then the passages found by similarity
    that fill ``dense_share`` of the room the leading units leave (each one whole), then the other
    passages found by similarity taking turns with the rest of the strategy's ranking. With no share
    the turns start at once, the surest passage first. Why a share at all: where a strategy's own
    units are passages of the same kind as similarity's (cluster's members), taking turns from the
    first one pushed similarity's third to fifth passages out at 512 tokens (session 51)."""
    if dense_share <= 0 or not found:
        return [*first, *interleave(found, rest)]  # every strategy but cluster: nothing to count
    room = (budget - sum(text_tokens([u.text for u in first])) if first else budget) * dense_share
    sizes = text_tokens([u.text for u in found]) if room > 0 else []
    leading = 0
    while leading < len(sizes) and sizes[leading] <= room:
        room -= sizes[leading]
        leading += 1
    return [*first, *found[:leading], *interleave(found[leading:], rest)]


def with_reserve(
    order: Sequence[Evidence],
    packed: list[Evidence],
    reserve: Sequence[Evidence],
    budget: int,
    focus: Sequence[str],
) -> list[Evidence]:
    """``packed`` (``order`` packed into ``budget``) again with the ``reserve`` units placed before the
    first unit that had to be shortened: where the whole units end, what a strategy holds in
    reserve (diffusion's best facts, cluster's summaries) fills the room rather than a passage's
    fragment. Unchanged when nothing
    was shortened or there is no reserve."""
    cut = next((u.id for u in packed if u.metadata.get("shortened")), None)
    if not reserve or cut is None:
        return packed
    at = next(i for i, u in enumerate(order) if u.id == cut)
    return pack([*order[:at], *reserve, *order[at:]], budget, focus=focus)


def split_lead(
    own: Sequence[Evidence], budget: int, lead: int | None
) -> tuple[list[Evidence], list[Evidence]]:
    """A strategy's ranking split into the units that lead the evidence and the rest, which takes
    turns with passages found by similarity.

    ``lead`` is how many units the strategy is surest of (chain search: each sequence's best
    chain, pairs and sentences; hypergraph: its best memory points). They lead whatever their size,
    and the compact units after them (QA pairs, sentences, facts, memory points) join them while all
    of it stays within ``LEAD_SHARE`` of the budget. Why not all of a strategy's compact units first,
    as before: on the question set composed from a real model's pairs (make_heldout_silver.py) the
    other chains and points filled 256 tokens with pairs about unrelated entities, below plain
    passages (hypergraph 47% against dense 50%); with the split it is 62%, and the two 2Wiki sets
    move by at most one question. ``lead`` None keeps every compact unit first."""
    if lead is None:
        return [u for u in own if u.kind in COMPACT_KINDS], [u for u in own if u.kind not in COMPACT_KINDS]
    sizes = text_tokens([u.text for u in own]) if own else []
    share, room = lead, budget * LEAD_SHARE - sum(sizes[:lead])
    while share < len(own) and own[share].kind in COMPACT_KINDS and sizes[share] <= room:
        room -= sizes[share]
        share += 1
    return list(own[:share]), list(own[share:])

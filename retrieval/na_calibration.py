"""The offline N/A threshold of chain search, read off each memory itself.

Offline, chain search answers with the best chain's last entity, or ``N/A``
when that chain's *support* is below a threshold. The support is the chain's
weakest hop (:attr:`~engramdb.retrieval.results.Chain.support`), not its
geometric mean: a confident second hop ("What nationality is Hans
Schweikart?") must not hide a first hop that found nothing about the film the
question named. A fixed threshold does not carry
over: how high chains score depends on the memory (how many similar facts it
holds, how they are worded) and on the search's own settings. So each memory
calibrates its own, from probes it provides itself, never from evaluation
questions:

* **answerable probes** — questions rebuilt from stored QA pairs: a pair drawn
  from a seeded, consistent sample of chunks (:func:`draw_seeds`: a small change
  to memory changes only its own probes; its subject a proper name), and when its
  answer is asked about by another stored pair, that pair as a second hop
  ("Where was Marie Curie born?" → "What is <ENTITY_Q1> the capital of?").
  Each is asked twice: *verbatim*, and *reworded* in the sub-question
  templates the decomposers write (:class:`Rewording`: "Who is Brand a play
  by?" becomes "Who is the author of Brand?"), because real questions reach
  chain search in that wording, never in the extractor's;
* **absent probes** — the reworded probes with the asked-about name replaced
  by an invented one ("Where was Vorlaquin Teshmerd born?"), so memory cannot
  hold the answer and every chain it finds is a false answer.

Each probe runs through the same chain search the questions will. The
threshold is the ``1 − na_false_accept`` quantile of the absent probes' best
chain support (by default 80% of the absent probes are refused), but never above
the support that 90% of the reworded answerable probes reach. The verbatim probes
are a sanity check only (a memory should answer what it holds word for word;
``benchmarks/calibrate_na.py`` reports them). With fewer than
:data:`MIN_PROBES` absent probes the memory is too small to say, and
:data:`FALLBACK_THRESHOLD` applies.

Cost: one chain search per probe (2 × ``na_probes``, in batches), once per memory state:
the result is cached on the strategy and stored in the graph as a
``ChainCalibration`` node keyed by the search settings, together with the
memory's fingerprint (document count and latest update), so a new process reuses
it and any ingest or delete makes the next offline ``N/A`` decision recompute
it. The report (threshold, probe scores, refusal and answer rates) is in
``engramdb ask --trace`` and ``AskResult.details``.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from engramdb.platform.embedders import Embedder
from engramdb.platform.graph import Graph
from engramdb.retrieval.answer_types import UNKNOWN, can_feed_next_hop, expected_type, fit
from engramdb.retrieval.relation_templates import question_templates

VERSION = 4  # 4: probes drawn by a hash of their own text (consistent under small changes)
#: Below this many absent probes the memory is too small to calibrate on.
MIN_PROBES = 8
#: The threshold of a memory too small to calibrate (the value measured on the MuSiQue memory
#: before per-memory calibration existed).
FALLBACK_THRESHOLD = 0.5
#: The share of answerable probes that must stay answered (guards very dense memories).
MIN_ANSWER_RATE = 0.9
_CHUNK_BATCH = 64

_SYLLABLES = (
    "vor lan quin tesh merd zal bri oth kev ula drom pas ner ix ol ump rab sen tor gal mi fel cra yus "
    "hob ert vin dal sor eth kul mar nov pel quor rin sav tul ves wim yor zen"
).split()


@dataclass(frozen=True)
class Probe:
    """One rebuilt question: its sub-questions, whether memory holds its answer, and that answer."""

    sequence: tuple[str, ...]
    answerable: bool
    answer: str = ""


@dataclass
class NACalibration:
    """A memory's calibrated N/A threshold and the probe scores behind it."""

    threshold: float
    false_accept: float
    answerable_scores: list[float] = field(default_factory=list)  # the reworded answerable probes
    absent_scores: list[float] = field(default_factory=list)
    verbatim_scores: list[float] = field(default_factory=list)  # answerable probes as stored
    answered_correctly: int = 0  # reworded probes whose best chain ends at the stored answer
    verbatim_correct: int = 0
    rule: str = ""
    seconds: float = 0.0
    version: int = VERSION

    @property
    def refusal_rate(self) -> float:
        """Share of absent probes refused (N/A) at the threshold."""
        s = self.absent_scores
        return sum(x < self.threshold for x in s) / len(s) if s else 0.0

    @property
    def answer_rate(self) -> float:
        """Share of answerable probes answered (not N/A) at the threshold."""
        s = self.answerable_scores
        return sum(x >= self.threshold for x in s) / len(s) if s else 0.0

    @property
    def verbatim_answer_rate(self) -> float:
        """Share of answerable probes asked as stored that are answered at the threshold."""
        s = self.verbatim_scores
        return sum(x >= self.threshold for x in s) / len(s) if s else 0.0

    @property
    def probe_accuracy(self) -> float:
        """Share of all probes handled right: absent refused, answerable answered."""
        total = len(self.absent_scores) + len(self.answerable_scores)
        right = sum(x < self.threshold for x in self.absent_scores) + sum(
            x >= self.threshold for x in self.answerable_scores
        )
        return right / total if total else 0.0

    def summary(self) -> dict[str, Any]:
        return {
            "threshold": round(self.threshold, 4), "rule": self.rule,
            "absent_probes": len(self.absent_scores), "answerable_probes": len(self.answerable_scores),
            "refusal_rate": round(self.refusal_rate, 3), "answer_rate": round(self.answer_rate, 3),
            "verbatim_answer_rate": round(self.verbatim_answer_rate, 3),
            "answered_correctly": self.answered_correctly, "verbatim_correct": self.verbatim_correct,
            "seconds": round(self.seconds, 2),
        }  # fmt: skip

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> NACalibration | None:
        try:
            data = json.loads(text)
            if data.get("version") != VERSION:
                return None
            return cls(**data)
        except (TypeError, ValueError):
            return None


def invented_name(rng: random.Random) -> str:
    """A two-word name no memory holds ("Vorlaquin Teshmerd")."""
    words = []
    for _ in range(2):
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3)))
        words.append(word.capitalize())
    return " ".join(words)


def _usable_seed(row: dict[str, Any]) -> str | None:
    """The name of the entity the stored question asks about, when it is spelled in the question."""
    if not row["answer_names"]:
        return None
    for name in row["question_entity_names"] or ():
        if (
            name and len(name) > 1 and name in row["question"] and name not in row["answer_names"]
            and any(ch.isupper() for ch in name) and can_feed_next_hop(name, "THING")
        ):  # fmt: skip
            return name
    return None


@dataclass(frozen=True)
class ProbeSet:
    """The probes of one calibration: as stored, reworded, and reworded about an invented name."""

    verbatim: list[Probe]
    reworded: list[Probe]
    absent: list[Probe]


class Rewording:
    """Rewords a stored question the way the decomposers word sub-questions.

    Stored questions are worded by the extractor ("Who is Brand a play by?"); the
    questions chain search is asked are worded by the decomposers' templates ("Who is
    the author of Brand?"). A probe asked verbatim is therefore easier than any real
    question. So each probe is also asked in the template closest to its stored
    question (by embedding, the subject masked) among those whose expected answer kind
    fits the stored answer. The nearest template is not always the same relation, which
    is what real sub-questions face too.
    """

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.templates = question_templates()
        self.vectors = np.asarray(embedder.embed_documents([t.format(x=_MASK) for t in self.templates]))
        self.kinds = [expected_type(t.format(x=_MASK)) for t in self.templates]

    def reword(self, items: Sequence[tuple[str, str, str, str]]) -> list[str | None]:
        """For each (stored question, subject name, answer name, answer type): the question in the
        closest fitting template about the same subject, or None when none fits."""
        if not items:
            return []
        masked = [question.replace(subject, _MASK) for question, subject, _a, _t in items]
        sims = np.asarray(self.embedder.embed_documents(masked)) @ self.vectors.T
        out: list[str | None] = []
        for (_question, subject, answer, answer_type), row in zip(items, sims, strict=True):
            chosen = None
            for j in np.argsort(-row):
                if fit(self.kinds[j], answer, answer_type) < UNKNOWN:
                    continue
                chosen = self.templates[j].format(x=subject)
                break
            out.append(chosen)
        return out


_MASK = "X"


def _draw_key(seed: int, text: str) -> int:
    """A chunk's or a pair's place in the draw: a hash of its own text, not a position in a
    shuffled list, so what memory adds or changes elsewhere never moves it."""
    return int.from_bytes(hashlib.blake2b(f"{seed}\x1f{text}".encode(), digest_size=8).digest(), "big")


def _pair_text(row: dict[str, Any]) -> str:
    """A pair as its words (question and answers), which an extractor's renumbering leaves alone."""
    return "\x1f".join([row["question"], *row["answer_names"]])


def draw_seeds(
    chunk_ids: Sequence[str],
    read_pairs: Callable[[list[str]], Sequence[dict[str, Any]]],
    count: int,
    seed: int,
) -> list[tuple[dict[str, Any], str]]:
    """Up to ``count`` stored pairs to build probes from, each with the name it asks about.

    One pair per chunk first, so the probes spread over the memory, then more per chunk
    for a small memory. Chunks and pairs are taken in the order of a seeded hash of their
    own text (a *consistent* sample): a change to a few chunks (a document added, an
    extractor that words a few pairs otherwise) changes only the probes drawn from those
    chunks, and the calibrated bar moves only as much as the memory did. A shuffled list
    would draw every probe anew after any such change, and move the bar by the noise of a
    new sample. ``read_pairs`` gives the ``chain/probe_pairs`` rows of some chunks.
    """
    ordered = sorted(chunk_ids, key=lambda c: _draw_key(seed, c))
    seeds: list[tuple[dict[str, Any], str]] = []
    spare: list[tuple[int, tuple[dict[str, Any], str]]] = []
    for start in range(0, len(ordered), _CHUNK_BATCH):
        if len(seeds) >= count:
            break
        batch = ordered[start : start + _CHUNK_BATCH]
        by_chunk: dict[str, list[tuple[int, tuple[dict[str, Any], str]]]] = {}
        for row in read_pairs(batch):
            name = _usable_seed(row)
            if name is not None:
                by_chunk.setdefault(row["chunk_id"], []).append(
                    (_draw_key(seed, _pair_text(row)), (row, name))
                )
        for chunk_id in batch:
            usable = sorted(by_chunk.get(chunk_id, []), key=lambda u: u[0])
            if usable:
                seeds.append(usable[0][1])
                spare.extend(usable[1:])
    if len(seeds) < count:  # a small memory: more than one pair per chunk
        spare.sort(key=lambda u: u[0])
        seeds.extend(u[1] for u in spare[: count - len(seeds)])
    return seeds[:count]


def build_probes(graph: Graph, embedder: Embedder, count: int, seed: int) -> ProbeSet:
    """Up to ``count`` probes of each kind, drawn reproducibly from memory (see the module docstring)."""
    seeds = draw_seeds(
        [r["chunk_id"] for r in graph.read("chain/probe_chunks")],
        lambda chunk_ids: graph.read("chain/probe_pairs", chunk_ids=chunk_ids),
        count,
        seed,
    )
    nexts = _second_hops(graph, seeds)
    rewording = Rewording(embedder)
    first_items = [
        (row["question"], name, row["answer_names"][0], (row["answer_types"] or [""])[0] or "")
        for row, name in seeds
    ]
    second_items = [
        (nexts[row["qa_id"]][0], "<ENTITY_Q1>", nexts[row["qa_id"]][1], nexts[row["qa_id"]][2])
        for row, _ in seeds
        if row["qa_id"] in nexts
    ]
    first_reworded = rewording.reword(first_items)
    second_reworded = iter(rewording.reword(second_items))
    probes = ProbeSet([], [], [])
    for (row, name), first_new in zip(seeds, first_reworded, strict=True):
        follow = nexts.get(row["qa_id"])
        second_new = next(second_reworded) if follow is not None else None
        if follow is not None:
            verbatim, answer = (row["question"], follow[0]), follow[1]
        else:
            verbatim, answer = (row["question"],), row["answer_names"][0]
        probes.verbatim.append(Probe(verbatim, True, answer))
        if first_new is None or (follow is not None and second_new is None):
            continue
        reworded = (first_new, second_new) if follow is not None else (first_new,)
        probes.reworded.append(Probe(reworded, True, answer))  # type: ignore[arg-type]
        fake = invented_name(random.Random(_draw_key(seed, _pair_text(row))))
        probes.absent.append(Probe((first_new.replace(name, fake), *reworded[1:]), False))  # type: ignore[arg-type]
    return probes


def _second_hops(
    graph: Graph, seeds: Sequence[tuple[dict[str, Any], str]]
) -> dict[str, tuple[str, str, str]]:
    """For seed pairs whose first answer is an entity that another pair asks about: that pair's
    question with the answer's name as ``<ENTITY_Q1>``, its answer and the answer's type."""
    wanted = {
        row["answer_ids"][0]: row
        for row, _ in seeds
        if row["answer_ids"]
        and can_feed_next_hop(row["answer_names"][0], (row["answer_types"] or [""])[0] or "")
    }
    if not wanted:
        return {}
    out: dict[str, tuple[str, str, str]] = {}
    rows = graph.read("chain/next_pairs", entity_ids=list(wanted), per_entity=5)
    for r in rows:
        seed = wanted[r["entity_id"]]
        if seed["qa_id"] in out:
            continue
        name = seed["answer_names"][0]
        if name not in r["question"] or not r["answer_names"]:
            continue
        if set(r["answer_ids"]) & set(seed["question_entity_ids"]) or r["entity_id"] in r["answer_ids"]:
            continue  # a second hop that leads straight back is no second hop
        answer_type = (r["answer_types"] or [""])[0] or ""
        out[seed["qa_id"]] = (r["question"].replace(name, "<ENTITY_Q1>"), r["answer_names"][0], answer_type)
    return out


_DESCRIBED = re.compile(r"^(?:Who|What) (?:is|was|are|were) (?P<np>(?:the|a|an) .+ of .+?)\?$")


def composed_question(sequence: Sequence[str]) -> str | None:
    """A probe's sub-questions as the one question a user would ask: a one-hop probe as it is, a
    two-hop probe with its first hop's description in place of ``<ENTITY_Q1>`` ("Who is the
    author of Brand?" + "Where was <ENTITY_Q1> born?" → "Where was the author of Brand born?").
    None when the first hop is not worded as "the <relation> of <name>" (no natural composition)."""
    if len(sequence) == 1:
        return sequence[0]
    if len(sequence) != 2 or "<ENTITY_Q1>" not in sequence[1]:
        return None
    found = _DESCRIBED.match(sequence[0].strip())
    return sequence[1].replace("<ENTITY_Q1>", found.group("np")) if found else None


#: Probes searched together (their hops share embedding calls and graph round trips).
PROBE_BATCH = 20


def calibrate(
    graph: Graph,
    embedder: Embedder,
    best_chains: Callable[[Sequence[tuple[str, ...]]], list[tuple[float, str]]],
    *,
    probes: int,
    false_accept: float,
    seed: int,
    with_verbatim: bool = False,
) -> NACalibration:
    """Run the probes through ``best_chains`` (sequences → each one's (best chain score, its
    answer)) and read the threshold off their scores (see the module docstring). The verbatim
    probes only serve as a report, so they are searched only ``with_verbatim``."""
    started = time.perf_counter()
    built = build_probes(graph, embedder, probes, seed)
    verbatim = built.verbatim if with_verbatim else []
    results = run_probes(best_chains, [*built.reworded, *built.absent, *verbatim])
    n_reworded, n_absent = len(built.reworded), len(built.absent)
    reworded = results[:n_reworded]
    reworded_scores = [score for score, _ in reworded]
    absent_scores = [score for score, _ in results[n_reworded : n_reworded + n_absent]]
    verbatim_results = results[n_reworded + n_absent :]
    if len(absent_scores) < MIN_PROBES:
        threshold, rule = FALLBACK_THRESHOLD, f"fallback: only {len(absent_scores)} probes"
    else:
        # nextafter: an absent probe scoring exactly the quantile is refused too
        threshold = float(np.nextafter(np.quantile(np.asarray(absent_scores), 1.0 - false_accept), np.inf))
        rule = f"refuses {1 - false_accept:.0%} of absent probes"
        guard = float(np.quantile(np.asarray(reworded_scores), 1.0 - MIN_ANSWER_RATE))
        if guard < threshold:
            threshold, rule = guard, f"answers {MIN_ANSWER_RATE:.0%} of reworded answerable probes"
    return NACalibration(
        threshold=threshold, false_accept=false_accept, answerable_scores=reworded_scores,
        absent_scores=absent_scores, verbatim_scores=[score for score, _ in verbatim_results],
        answered_correctly=_right(built.reworded, reworded), verbatim_correct=_right(verbatim, verbatim_results),
        rule=rule, seconds=time.perf_counter() - started,
    )  # fmt: skip


def run_probes(
    best_chains: Callable[[Sequence[tuple[str, ...]]], list[tuple[float, str]]], probes: Sequence[Probe]
) -> list[tuple[float, str]]:
    """Each probe's (best chain score, answer), searched :data:`PROBE_BATCH` at a time."""
    results: list[tuple[float, str]] = []
    for start in range(0, len(probes), PROBE_BATCH):
        results.extend(best_chains([p.sequence for p in probes[start : start + PROBE_BATCH]]))
    return results


def _right(probes: Sequence[Probe], found: Sequence[tuple[float, str]]) -> int:
    """How many probes' best chain ends at the answer they were built from."""
    return sum(a.strip().lower() == p.answer.strip().lower() for p, (_, a) in zip(probes, found, strict=True))


def namespace_seed(namespace: str) -> int:
    """The probe draw's seed: the same memory draws the same probes."""
    return zlib.crc32(namespace.encode("utf-8"))

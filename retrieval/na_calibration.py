"""The offline N/A threshold of chain search, read off each memory itself.

Offline, chain search answers with the best chain's last entity, or ``N/A``
when that chain scores below a threshold. A fixed threshold does not carry
over: how high chains score depends on the memory (how many similar facts it
holds, how they are worded) and on the search's own settings. So each memory
calibrates its own, from probes it provides itself, never from evaluation
questions:

* **answerable probes** — questions rebuilt from stored QA pairs: a pair drawn
  from a seeded sample of chunks, and when its answer is asked about by
  another stored pair, that pair as a second hop ("Where was Marie Curie
  born?" → "What is <ENTITY_Q1> the capital of?");
* **absent probes** — the same probes with the asked-about name replaced by an
  invented one ("Where was Vorlaquin Teshmerd born?"), so memory cannot hold
  the answer and every chain it finds is a false answer.

Each probe runs through the same chain search the questions will. The
threshold is the ``1 − na_false_accept`` quantile of the absent probes' best
chain scores (by default 80% of the absent probes are refused), but never above
the score that 90% of the answerable probes reach (a memory must answer what it
holds verbatim). With fewer than :data:`MIN_PROBES` absent probes the memory is
too small to say, and :data:`FALLBACK_THRESHOLD` applies.

Cost: one chain search per probe (2 × ``na_probes``), once per memory state:
the result is cached on the strategy and stored in the graph as a
``ChainCalibration`` node keyed by the search settings, together with the
memory's fingerprint (document count and latest update), so a new process reuses
it and any ingest or delete makes the next offline ``N/A`` decision recompute
it. The report (threshold, probe scores, refusal and answer rates) is in
``engramdb ask --trace`` and ``AskResult.details``.
"""

from __future__ import annotations

import json
import random
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from engramdb.platform.graph import Graph
from engramdb.retrieval.answer_types import can_feed_next_hop

VERSION = 1
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
    answerable_scores: list[float] = field(default_factory=list)
    absent_scores: list[float] = field(default_factory=list)
    answered_correctly: int = 0
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
            "answered_correctly": self.answered_correctly, "seconds": round(self.seconds, 2),
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
        if name and len(name) > 1 and name in row["question"] and name not in row["answer_names"]:
            return name
    return None


def build_probes(graph: Graph, count: int, seed: int) -> tuple[list[Probe], list[Probe]]:
    """Up to ``count`` answerable probes and their absent twins, drawn reproducibly from memory."""
    rng = random.Random(seed)
    chunk_ids = [r["chunk_id"] for r in graph.read("chain/probe_chunks")]
    rng.shuffle(chunk_ids)
    seeds: list[tuple[dict[str, Any], str]] = []
    spare: list[tuple[dict[str, Any], str]] = []
    for start in range(0, len(chunk_ids), _CHUNK_BATCH):
        if len(seeds) >= count:
            break
        rows = graph.read("chain/probe_pairs", chunk_ids=chunk_ids[start : start + _CHUNK_BATCH])
        by_chunk: dict[str, list[tuple[dict[str, Any], str]]] = {}
        for row in rows:
            name = _usable_seed(row)
            if name is not None:
                by_chunk.setdefault(row["chunk_id"], []).append((row, name))
        for chunk_id in chunk_ids[start : start + _CHUNK_BATCH]:
            usable = by_chunk.get(chunk_id, [])
            if usable:  # one pair per chunk first, so the probes spread over the memory
                pick = rng.randrange(len(usable))
                seeds.append(usable[pick])
                spare.extend(u for i, u in enumerate(usable) if i != pick)
    if len(seeds) < count:  # a small memory: more than one pair per chunk
        rng.shuffle(spare)
        seeds.extend(spare[: count - len(seeds)])
    seeds = seeds[:count]
    nexts = _second_hops(graph, seeds)
    answerable: list[Probe] = []
    absent: list[Probe] = []
    for row, name in seeds:
        first = row["question"]
        follow = nexts.get(row["qa_id"])
        if follow is not None:
            sequence = (first, follow[0])
            answer = follow[1]
        else:
            sequence, answer = (first,), row["answer_names"][0]
        fake = invented_name(rng)
        answerable.append(Probe(sequence, True, answer))
        absent.append(Probe((first.replace(name, fake), *sequence[1:]), False))
    return answerable, absent


def _second_hops(graph: Graph, seeds: Sequence[tuple[dict[str, Any], str]]) -> dict[str, tuple[str, str]]:
    """For seed pairs whose first answer is an entity that another pair asks about: that pair's
    question with the answer's name as ``<ENTITY_Q1>``, and its answer."""
    wanted = {
        row["answer_ids"][0]: row
        for row, _ in seeds
        if row["answer_ids"]
        and can_feed_next_hop(row["answer_names"][0], (row["answer_types"] or [""])[0] or "")
    }
    if not wanted:
        return {}
    out: dict[str, tuple[str, str]] = {}
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
        out[seed["qa_id"]] = (r["question"].replace(name, "<ENTITY_Q1>"), r["answer_names"][0])
    return out


def calibrate(
    graph: Graph,
    best_chain: Callable[[tuple[str, ...]], tuple[float, str]],
    *,
    probes: int,
    false_accept: float,
    seed: int,
) -> NACalibration:
    """Run the probes through ``best_chain`` (a sequence → (best chain score, its answer)) and read
    the threshold off their scores (see the module docstring)."""
    started = time.perf_counter()
    answerable, absent = build_probes(graph, probes, seed)
    answerable_scores, absent_scores, correct = [], [], 0
    for probe in answerable:
        score, answer = best_chain(probe.sequence)
        answerable_scores.append(score)
        correct += answer.strip().lower() == probe.answer.strip().lower()
    for probe in absent:
        absent_scores.append(best_chain(probe.sequence)[0])
    if len(absent_scores) < MIN_PROBES:
        threshold, rule = FALLBACK_THRESHOLD, f"fallback: only {len(absent_scores)} probes"
    else:
        # nextafter: an absent probe scoring exactly the quantile is refused too
        threshold = float(np.nextafter(np.quantile(np.asarray(absent_scores), 1.0 - false_accept), np.inf))
        rule = f"refuses {1 - false_accept:.0%} of absent probes"
        guard = float(np.quantile(np.asarray(answerable_scores), 1.0 - MIN_ANSWER_RATE))
        if guard < threshold:
            threshold, rule = guard, f"answers {MIN_ANSWER_RATE:.0%} of answerable probes"
    return NACalibration(
        threshold=threshold, false_accept=false_accept, answerable_scores=answerable_scores,
        absent_scores=absent_scores, answered_correctly=correct, rule=rule,
        seconds=time.perf_counter() - started,
    )  # fmt: skip


def namespace_seed(namespace: str) -> int:
    """The probe draw's seed: the same memory draws the same probes."""
    return zlib.crc32(namespace.encode("utf-8"))

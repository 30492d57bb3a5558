"""Chain beam search over QA pairs (Panini's RICR).

For each sequence of sub-questions: hop 1 is retrieved and reranked; the top
B candidates with distinct answers seed B chains. At each later hop every
chain fills the placeholders of the next sub-question with its own earlier
answers, retrieves and reranks candidates for that instantiated question, and
extends itself with each of the top-k; a chain's score is the geometric mean
of its hop scores. Of all extensions, the best B with distinct current
answers survive. Parallel sequences run independently; the deduplicated QA
pairs of all surviving chains are the evidence.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from engramdb.platform.embedders import Embedder
from engramdb.retrieval.decomposition import PLACEHOLDER
from engramdb.retrieval.hop_retrieval import HopRequest, HopRetriever
from engramdb.retrieval.rerankers import Reranker
from engramdb.retrieval.results import Chain, ChainStep, HopTrace


@dataclass(frozen=True)
class BeamSettings:
    beam_width: int = 5  # B: chains kept per hop (paper default)
    qa_top_k: int = 15  # reranked QA pairs a chain may extend with (paper default)


@dataclass
class SearchOutcome:
    chains: list[list[Chain]]  # per sequence, best first
    trace: list[HopTrace] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)


def instantiate(sub_question: str, chain: Chain) -> tuple[str, list[str], list[str]]:
    """Fill ``<ENTITY_Qn>`` with the chain's answer at step n; returns (text, entity ids, names)."""
    ids: list[str] = []
    names: list[str] = []

    def fill(match: object) -> str:
        n = int(match.group(1))  # type: ignore[attr-defined]
        step = chain.steps[n - 1]
        ids.append(step.answer_id)
        names.append(step.answer_name)
        return step.answer_name

    return PLACEHOLDER.sub(fill, sub_question), ids, names


class ChainSearch:
    def __init__(
        self, hops: HopRetriever, reranker: Reranker, embedder: Embedder, settings: BeamSettings | None = None
    ) -> None:
        self.hops = hops
        self.reranker = reranker
        self.embedder = embedder
        self.settings = settings or BeamSettings()

    def run(self, sequences: Sequence[Sequence[str]], trace: bool = False) -> SearchOutcome:
        outcome = SearchOutcome(chains=[])
        timings = {"retrieve": 0.0, "rerank": 0.0, "embed": 0.0}
        for seq_index, sequence in enumerate(sequences):
            outcome.chains.append(self._run_sequence(seq_index, sequence, outcome, timings, trace))
        outcome.timings = timings
        return outcome

    def _run_sequence(
        self,
        seq_index: int,
        sequence: Sequence[str],
        outcome: SearchOutcome,
        timings: dict[str, float],
        trace: bool,
    ) -> list[Chain]:
        beams: list[Chain] = [Chain(steps=(), score=1.0)]
        b, k = self.settings.beam_width, self.settings.qa_top_k
        for hop, sub_question in enumerate(sequence, start=1):
            instantiated = [instantiate(sub_question, chain) for chain in beams]
            started = time.perf_counter()
            vectors = self.embedder.embed_documents([q for q, _, _ in instantiated])
            timings["embed"] += time.perf_counter() - started
            extensions: list[Chain] = []
            hop_trace = HopTrace(seq_index, hop, [q for q, _, _ in instantiated], [], [], [])
            started = time.perf_counter()
            requests = [
                HopRequest(q, v, tuple(ids)) for (q, ids, _), v in zip(instantiated, vectors, strict=True)
            ]
            retrieved = self.hops.retrieve_many(requests)
            timings["retrieve"] += time.perf_counter() - started
            for chain, (query, _ids, names), found in zip(beams, instantiated, retrieved, strict=True):
                visited = _visited(chain)
                candidates = [c for c in found if not set(c.answer_ids) <= visited]
                started = time.perf_counter()
                scored = self.reranker.score(query, candidates, names)[:k]
                timings["rerank"] += time.perf_counter() - started
                prior = chain.score ** len(chain.steps) if chain.steps else 1.0
                for item in scored:
                    if trace:
                        hop_trace.candidates.append((query, item.qa.text, item.score))
                    for answer_id, answer_name in zip(item.qa.answer_ids, item.qa.answer_names, strict=True):
                        if answer_id in visited:
                            continue  # a chain never loops back to an entity it already went through
                        step = ChainStep(query, item.qa, answer_id, answer_name, item.score)
                        score = (prior * max(item.score, 1e-9)) ** (1.0 / hop)
                        extensions.append(Chain(steps=(*chain.steps, step), score=score))
            extensions.sort(key=lambda c: (-c.score, c.answer_id))
            kept: list[Chain] = []
            seen: set[str] = set()
            for chain in extensions:
                if chain.answer_id in seen:
                    if trace:
                        hop_trace.pruned.append((_summary(chain), chain.score))
                    continue
                if len(kept) < b:
                    kept.append(chain)
                    seen.add(chain.answer_id)
                elif trace:
                    hop_trace.pruned.append((_summary(chain), chain.score))
            if trace:
                hop_trace.kept = [(_summary(c), c.score) for c in kept]
                outcome.trace.append(hop_trace)
            beams = kept
            if not beams:
                break
        return [c for c in beams if c.steps]


def _visited(chain: Chain) -> set[str]:
    """Entities a chain has passed through: earlier answers and the entities its QA pairs asked about."""
    seen: set[str] = set()
    for step in chain.steps:
        seen.add(step.answer_id)
        seen.update(step.qa.question_entity_ids)
    return seen


def _summary(chain: Chain) -> str:
    return " ⇒ ".join(f"{s.qa.question} [{s.answer_name}]" for s in chain.steps)

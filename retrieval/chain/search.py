"""Chain beam search over QA pairs (Panini's RICR).

For each sequence of sub-questions: hop 1 is retrieved and reranked; the top
B candidates with distinct answers seed B chains. At each later hop every
chain fills the placeholders of the next sub-question with its own earlier
answers, retrieves and reranks candidates for that instantiated question, and
extends itself with each of the top-k; a chain's score is the geometric mean
of its hop scores. Of all extensions, the best B with distinct current
answers survive. Parallel sequences run independently (in lockstep, so their
hops share round trips); the deduplicated QA pairs of all surviving chains
are the evidence.

What a hop may accept (so it holds on questions it was never tuned on):

* direction — candidates are scored as forward, reverse or unanchored
  relative to the hop's subjects (:mod:`engramdb.retrieval.hop_direction`), so
  "What is the capital of Warsaw?" never takes "What is Warsaw the capital
  of? → Poland" as a forward match;
* answer kind — each answer is weighed by how well it fits what the
  sub-question asks for (:mod:`engramdb.retrieval.answer_types`); an answer a
  later hop will ask about must be an entity (never "1865" or "play"); a
  nationality given where a country is asked becomes the country
  ("Norwegian" → Norway), and a place that is not a country may take one
  implicit step to the country memory says contains it ("Warsaw" → Poland);
* loops — a chain never returns to an entity it passed, except a place an
  implicit step only crossed on the way to its country.

A hop's score is the product of its steps' scores (its match and, if any,
its implicit step); :attr:`~engramdb.retrieval.results.Chain.support` is the
weakest hop, which the offline N/A decision uses.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from engramdb.ingestion.extraction.rules_lexicon import country_of_demonym, place_kind
from engramdb.platform.embedders import Embedder, embed_queries
from engramdb.retrieval.answer_types import UNKNOWN, ExpectedType, can_feed_next_hop, expected_type, fit
from engramdb.retrieval.decomposition import PLACEHOLDER
from engramdb.retrieval.hop_retrieval import HopRequest, HopRetriever
from engramdb.retrieval.rerankers import Reranker
from engramdb.retrieval.results import Chain, ChainStep, HopTrace, ScoredQA


@dataclass(frozen=True)
class BeamSettings:
    beam_width: int = 5  # B: chains kept per hop (paper default)
    qa_top_k: int = 15  # reranked QA pairs a chain may extend with (paper default)
    related_evidence: int = 2  # last-hop pairs about other entities added to the evidence


@dataclass
class SearchOutcome:
    chains: list[list[Chain]]  # per sequence, best first
    trace: list[HopTrace] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    #: Per sequence, the best pairs of its last sub-question that are about other entities than
    #: the chains reached (the same question asked of something else): evidence for a reader when
    #: the chain broke earlier, never part of a chain or of the offline answer.
    related: list[list[ScoredQA]] = field(default_factory=list)


def _step_of_hop(chain: Chain, n: int) -> ChainStep:
    """The step whose answer stands for hop ``n``: the last step of that hop (an implicit type
    step, when there is one, replaces the match's answer), or the n-th step of an older chain."""
    matches = [step for step in chain.steps if step.hop == n]
    return matches[-1] if matches else chain.steps[n - 1]


def instantiate(sub_question: str, chain: Chain) -> tuple[str, list[str], list[str]]:
    """Fill ``<ENTITY_Qn>`` with the chain's answer of hop n; returns (text, entity ids, names)."""
    ids: list[str] = []
    names: list[str] = []

    def fill(match: object) -> str:
        n = int(match.group(1))  # type: ignore[attr-defined]
        step = _step_of_hop(chain, n)
        ids.append(step.answer_id)
        names.append(step.answer_name)
        return step.answer_name

    return PLACEHOLDER.sub(fill, sub_question), ids, names


def _referenced_later(sequence: Sequence[str], hop: int) -> bool:
    """Whether a later sub-question of the sequence asks about hop ``hop``'s answer."""
    return any(int(m.group(1)) == hop for q in sequence[hop:] for m in PLACEHOLDER.finditer(q))


class ChainSearch:
    def __init__(
        self, hops: HopRetriever, reranker: Reranker, embedder: Embedder, settings: BeamSettings | None = None
    ) -> None:
        self.hops = hops
        self.reranker = reranker
        self.embedder = embedder
        self.settings = settings or BeamSettings()

    def run(self, sequences: Sequence[Sequence[str]], trace: bool = False) -> SearchOutcome:
        """Chains for each sequence (best first). Sequences run independently but in lockstep, hop
        by hop, so the beams of all of them are embedded and retrieved in the same round trips."""
        timings = {"retrieve": 0.0, "rerank": 0.0, "embed": 0.0}
        outcome = SearchOutcome(chains=[[] for _ in sequences])
        related: list[list[ScoredQA]] = [[] for _ in sequences]
        beams: list[list[Chain]] = [[Chain(steps=(), score=1.0)] for _ in sequences]
        active = [i for i, sequence in enumerate(sequences) if sequence]
        hop = 1
        while active:
            items: list[tuple[int, Chain, tuple[str, list[str], list[str]]]] = []
            traces: dict[int, HopTrace] = {}
            for i in active:
                for chain in beams[i]:
                    items.append((i, chain, instantiate(sequences[i][hop - 1], chain)))
                if trace:
                    queries = [q for j, _c, (q, _, _) in items if j == i]
                    traces[i] = HopTrace(i, hop, queries, [], [], [])
            scored_per_item = self._score_hop(
                [inst for _, _, inst in items], [c for _, c, _ in items], timings,
                [traces.get(i) for i, _, _ in items],
            )  # fmt: skip
            extensions: dict[int, list[Chain]] = {i: [] for i in active}
            for (i, chain, (query, _ids, _names)), scored in zip(items, scored_per_item, strict=True):
                sub_question = sequences[i][hop - 1]
                if hop == len(sequences[i]):
                    related[i].extend(s for s in scored if s.direction == "unanchored")
                extensions[i].extend(
                    self._extend(chain, query, scored, hop, expected_type(sub_question),
                                 _referenced_later(sequences[i], hop))
                )  # fmt: skip
            expected = {i: expected_type(sequences[i][hop - 1]) for i in active}
            extensions = self._resolve_kinds(extensions, hop, expected, timings)
            for i in active:
                beams[i] = self._prune(extensions[i], traces.get(i))
                if trace:
                    outcome.trace.append(traces[i])
            hop += 1
            active = [i for i in active if beams[i] and len(sequences[i]) >= hop]
        outcome.chains = [[c for c in per_sequence if c.steps] for per_sequence in beams]
        outcome.trace.sort(key=lambda h: (h.sequence, h.hop))
        outcome.related = [_best_distinct(r, self.settings.related_evidence) for r in related]
        outcome.timings = timings
        return outcome

    def _prune(self, extensions: list[Chain], hop_trace: HopTrace | None) -> list[Chain]:
        """The best B extensions with distinct current answers."""
        extensions.sort(key=lambda c: (-c.score, c.answer_id))
        kept: list[Chain] = []
        seen: set[str] = set()
        for chain in extensions:
            if chain.answer_id not in seen and len(kept) < self.settings.beam_width:
                kept.append(chain)
                seen.add(chain.answer_id)
            elif hop_trace is not None:
                hop_trace.pruned.append((_summary(chain), chain.score))
        if hop_trace is not None:
            hop_trace.kept = [(_summary(c), c.score) for c in kept]
        return kept

    def _score_hop(
        self,
        instantiated: Sequence[tuple[str, list[str], list[str]]],
        beams: Sequence[Chain],
        timings: dict[str, float],
        hop_traces: Sequence[HopTrace | None] | None = None,
    ) -> list[list[ScoredQA]]:
        """Retrieve and rerank the candidates of every beam's instantiated sub-question."""
        started = time.perf_counter()
        # as queries, in one batch, through the embedder's query cache (a repeated ask embeds nothing again)
        vectors = embed_queries(self.embedder, [q for q, _, _ in instantiated])
        timings["embed"] += time.perf_counter() - started
        started = time.perf_counter()
        requests = [
            HopRequest(q, v, tuple(ids), tuple(names))
            for (q, ids, names), v in zip(instantiated, vectors, strict=True)
        ]
        retrieved = self.hops.retrieve_hops(requests)
        timings["retrieve"] += time.perf_counter() - started
        out: list[list[ScoredQA]] = []
        traces = hop_traces or [None] * len(beams)
        for chain, (query, _ids, _names), found, hop_trace in zip(
            beams, instantiated, retrieved, traces, strict=True
        ):
            visited = _visited(chain)
            started = time.perf_counter()
            # Scored with every candidate present (a reverse twin tells a reverse reading apart), then
            # the pairs that could only lead back to where the chain has been are dropped.
            scored = self.reranker.score(query, found.candidates, found.subject_names)
            timings["rerank"] += time.perf_counter() - started
            scored = [s for s in scored if not set(s.qa.answer_ids) <= visited][: self.settings.qa_top_k]
            if hop_trace is not None:
                for item in scored:
                    shown = (
                        item.qa.text
                        if item.direction in ("", "forward")
                        else f"{item.qa.text} [{item.direction}]"
                    )
                    hop_trace.candidates.append((query, shown, item.score))
            out.append(scored)
        return out

    def _extend(
        self,
        chain: Chain,
        query: str,
        scored: Sequence[ScoredQA],
        hop: int,
        expected: ExpectedType | None,
        feeds_later: bool,
    ) -> list[Chain]:
        """The chain extended by each answer of each scored pair that may stand for this hop.

        A pair's score is split per answer by the answer's own type fit (the
        reranker's score carries the best fit of the pair). An answer that a later
        hop would have to ask about must be an entity (not a date, number or common
        noun); a nationality adjective asked for as a country becomes that country.
        """
        visited = _visited(chain)
        out: list[Chain] = []
        for item in scored:
            base = item.score / max(item.type_factor, 1e-9)
            types = item.qa.answer_types or ("",) * len(item.qa.answer_ids)
            for answer_id, answer_name, answer_type in zip(
                item.qa.answer_ids, item.qa.answer_names, types, strict=False
            ):
                if answer_id in visited:
                    continue  # a chain never loops back to an entity it already went through
                if feeds_later and not can_feed_next_hop(answer_name, answer_type or ""):
                    continue
                step_score = min(1.0, base * fit(expected, answer_name, answer_type or ""))
                step = ChainStep(
                    query,
                    item.qa,
                    answer_id,
                    answer_name,
                    step_score,
                    hop,
                    False,
                    answer_type or "",
                    item.direction,
                )
                step = self._as_country(step, expected)
                if step.answer_id in visited:
                    continue
                steps = (*chain.steps, step)
                out.append(Chain(steps=steps, score=chain_score(steps)))
        return out

    def _as_country(self, step: ChainStep, expected: ExpectedType | None) -> ChainStep:
        """A nationality adjective given where a country is asked for, as that country ("Norwegian" →
        Norway, the stored entity when memory has one); any other step unchanged."""
        if expected is None or expected.kind != "country" or place_kind(step.answer_name) == "country":
            return step
        country = country_of_demonym(step.answer_name)
        if country is None:
            return step
        entity_id = self.hops.entity_ids_by_name([country]).get(country, f"country:{country}")
        return replace(step, answer_id=entity_id, answer_name=country, answer_type="PLACE",
                       score=min(1.0, step.score / UNKNOWN))  # fmt: skip

    def _resolve_kinds(
        self,
        extensions: dict[int, list[Chain]],
        hop: int,
        expected: dict[int, ExpectedType | None],
        timings: dict[str, float],
    ) -> dict[int, list[Chain]]:
        """Chains whose answer is a place where a country is asked for also try one implicit step to
        the country that contains it ("Where was Marie Curie born? → Warsaw", then "What country is
        Warsaw in?" → Poland); the lifted chain competes with the original. All sequences' lookups
        go in one batch."""
        todo: list[tuple[int, Chain]] = []
        for i, chains in extensions.items():
            kind = expected.get(i)
            if kind is None or kind.kind != "country":
                continue
            needing = [
                c for c in chains if c.steps[-1].direction in ("forward", "") and _needs_country(c.steps[-1])
            ]
            needing.sort(key=lambda c: (-c.score, c.answer_id))
            seen: set[str] = set()
            for chain in needing:
                if chain.answer_id not in seen and len(seen) < self.settings.beam_width:
                    seen.add(chain.answer_id)
                    todo.append((i, chain))
        if not todo:
            return extensions
        queries = [(f"What country is {c.answer_name} in?", [c.answer_id], [c.answer_name]) for _, c in todo]
        scored_per_chain = self._score_hop(queries, [c for _, c in todo], timings)
        for (i, chain), (query, _ids, _names), scored in zip(todo, queries, scored_per_chain, strict=True):
            step = chain.steps[-1]
            kind_fit = fit(expected[i], step.answer_name, step.answer_type)
            matched = replace(step, score=min(1.0, step.score / max(kind_fit, 1e-9)))
            visited = _visited(chain)
            for item in scored:
                if item.direction not in ("forward", ""):
                    continue
                countries = [
                    (a, n) for a, n in zip(item.qa.answer_ids, item.qa.answer_names, strict=False)
                    if place_kind(n) == "country" and a not in visited
                ]  # fmt: skip
                if not countries:
                    continue
                answer_id, answer_name = countries[0]
                implicit = ChainStep(
                    query, item.qa, answer_id, answer_name, item.score, hop, True, "PLACE", item.direction
                )
                steps = (*chain.steps[:-1], matched, implicit)
                extensions[i].append(Chain(steps=steps, score=chain_score(steps)))
                break
        return extensions


def chain_score(steps: Sequence[ChainStep]) -> float:
    """The geometric mean over hops of each hop's score; a hop that took an implicit step scores the
    product of its two steps, so the detour can only cost, never add."""
    per_hop: dict[int, float] = {}
    for i, step in enumerate(steps, start=1):
        key = step.hop or i
        per_hop[key] = per_hop.get(key, 1.0) * max(step.score, 1e-9)
    return math.prod(per_hop.values()) ** (1.0 / len(per_hop)) if per_hop else 0.0


def _needs_country(step: ChainStep) -> bool:
    """A place that is not itself a country (nor a nationality adjective)."""
    return (
        step.answer_type == "PLACE"
        and place_kind(step.answer_name) is None
        and country_of_demonym(step.answer_name) is None
        and can_feed_next_hop(step.answer_name, step.answer_type)
    )


def _visited(chain: Chain) -> set[str]:
    """Entities a chain has passed through: its hops' answers and the entities its QA pairs asked
    about. A place that an implicit step only passed on the way to its country ("Warsaw" on the way
    to Poland) is not counted, so a later hop may arrive there ("the capital of Poland")."""
    seen: set[str] = set()
    steps = chain.steps
    for i, step in enumerate(steps):
        lifted = i + 1 < len(steps) and steps[i + 1].implicit and steps[i + 1].hop == step.hop
        if not lifted:
            seen.add(step.answer_id)
        if not step.implicit:
            seen.update(step.qa.question_entity_ids)
    return seen


def _best_distinct(scored: Sequence[ScoredQA], limit: int) -> list[ScoredQA]:
    """The ``limit`` best-scored distinct QA pairs."""
    out: dict[str, ScoredQA] = {}
    for item in sorted(scored, key=lambda s: (-s.score, s.qa.qa_id)):
        if len(out) >= limit:
            break
        out.setdefault(item.qa.qa_id, item)
    return list(out.values())


def _summary(chain: Chain) -> str:
    return " ⇒ ".join(f"{s.qa.question} [{s.answer_name}]" for s in chain.steps)

"""``engramdb eval``: every registered strategy on one dataset and one memory, same metrics.

Each strategy is an :class:`~engramdb.retrieval.strategy.AskStrategy`, run
exactly as ``ask`` runs it; an :class:`EvalRunner` only adds the dataset's
gold sub-questions when the evaluation uses them. Per question and strategy it
records the answer, EM and F1 (standard normalisation, best over aliases),
recall@2/@5 of the gold supporting passages, whether a gold answer appears in
the evidence, evidence tokens and latency; for unanswerable items, whether the
strategy refused (N/A). A retrieval-only strategy (offline baselines) has no
answer, so only its retrieval columns are filled.

Equal budgets. Strategies hand the reader very different amounts of evidence
(a few QA pairs, five passages, five passages plus their gists), and more
evidence buys answer-in-evidence. So the passage baselines are measured at
several budgets (:data:`PASSAGE_BUDGETS`: top 1, 2, 3 and their own top-k,
5 by default): each budget is a real run of the strategy with that ``top_k``,
reported as ``dense@1`` … with the recipe's own budget keeping the plain name.
Their rows form quality-against-tokens curves in the report
(:mod:`engramdb.retrieval.eval.report`), so any strategy can be read against
a baseline given the same number of evidence tokens.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from engramdb.platform.errors import InputError
from engramdb.retrieval.decomposition import Decomposition, from_musique
from engramdb.retrieval.eval.data import EvalItem
from engramdb.retrieval.metrics import answer_in_text, exact_match, f1_score, percentile, recall_at_k
from engramdb.retrieval.passages import PassageStrategy
from engramdb.retrieval.results import NA, AskResult
from engramdb.retrieval.strategy import AskStrategy

#: Decomposition modes of an evaluation: the dataset's gold sub-questions, or the strategy's own.
DECOMPOSITION_MODES = ("gold", "llm", "offline")


#: Passage budgets (top-k) at which the passage baselines are also run, besides their own top_k.
PASSAGE_BUDGETS: tuple[int, ...] = (1, 2, 3, 5)


@dataclass
class EvalRunner:
    """One strategy as the evaluation runs it: with gold sub-questions when ``decomposition`` is ``gold``.

    ``label`` names its rows when several runners share a strategy (``dense@2``).
    """

    strategy: AskStrategy
    decomposition: str = "offline"
    label: str | None = None

    @property
    def name(self) -> str:
        return self.label or self.strategy.name

    @property
    def budget(self) -> int | None:
        """Passages a passage baseline returns; None for strategies whose evidence size is their own."""
        return self.strategy.recipe.top_k if isinstance(self.strategy, PassageStrategy) else None

    @property
    def token_budget(self) -> int | None:
        """The evidence-token budget the strategy runs at (None: its own amount)."""
        return self.strategy.recipe.budget

    def _decomposition(self, item: EvalItem) -> Decomposition | None:
        if self.decomposition != "gold":
            return None  # the strategy's own decomposer (LLM if configured, else offline)
        if not item.gold_decomposition:
            raise InputError(f"item {item.id} has no gold decomposition; use --decomposition offline or llm")
        return from_musique(item.gold_decomposition)

    def run(self, item: EvalItem) -> tuple[AskResult, float]:
        started = time.perf_counter()
        result = self.strategy.ask(item.question, decomposition=self._decomposition(item))
        return result, time.perf_counter() - started


@dataclass
class Record:
    strategy: str
    item_id: str
    question: str
    gold: list[str]
    answerable: bool
    answer: str | None
    em: float | None
    f1: float | None
    refused: bool | None
    recall_at_2: float | None
    recall_at_5: float | None
    answer_in_evidence: bool
    evidence_tokens: int
    latency_ms: float
    evidence: list[str]
    passage_ids: list[str]
    family: str = ""  # the strategy's registered name (rows of one family at several budgets form a curve)
    budget: int | None = None  # top-k of a passage baseline
    token_budget: int | None = None  # the evidence-token budget of the run (None: the strategy's own amount)


def with_budgets(runners: Sequence[EvalRunner], budgets: Sequence[int] = PASSAGE_BUDGETS) -> list[EvalRunner]:
    """Each runner, preceded for a passage baseline by its runs at the smaller ``budgets``.

    The extra runs are the same strategy class with ``top_k`` set to the budget
    (a real run each: with an LLM the reader answers from exactly that many
    passages); budgets at or above the runner's own top_k are skipped, as the
    runner itself is the largest.
    """
    out: list[EvalRunner] = []
    for runner in runners:
        own = runner.budget
        if own is not None and runner.label is None:
            strategy = runner.strategy
            for k in sorted(set(budgets)):
                if k < own:
                    recipe = strategy.recipe.model_copy(update={"top_k": k})
                    variant = type(strategy)(strategy.context, recipe)
                    out.append(EvalRunner(variant, runner.decomposition, f"{strategy.name}@{k}"))
        out.append(runner)
    return out


def at_token_budgets(runners: Sequence[EvalRunner], budgets: Sequence[int]) -> list[EvalRunner]:
    """Every runner at each evidence-token budget (``name@256``): the same strategy class with the
    recipe's ``budget`` set, a real run each, so all strategies and baselines meet at equal tokens."""
    out: list[EvalRunner] = []
    for budget in sorted(set(budgets)):
        for runner in runners:
            strategy = runner.strategy
            variant = type(strategy)(strategy.context, strategy.recipe.model_copy(update={"budget": budget}))
            out.append(EvalRunner(variant, runner.decomposition, f"{runner.name}@{budget}"))
    return out


def score(runner: EvalRunner, item: EvalItem) -> Record:
    result, seconds = runner.run(item)
    answered = result.answer is not None
    em = f1 = None
    if answered and item.answerable:
        em, f1 = exact_match(result.answer or "", item.answers), f1_score(result.answer or "", item.answers)
    has_gold_passages = bool(item.supporting_doc_ids)
    texts = [e.text for e in result.evidence]
    passage_ids = [e.doc_id for e in result.evidence]  # documents, best first (repeats count once in recall)
    return Record(
        strategy=runner.name, item_id=item.id, question=item.question, gold=list(item.answers),
        answerable=item.answerable, answer=result.answer, em=em, f1=f1,
        refused=(result.answer == NA) if answered else None,
        recall_at_2=recall_at_k(passage_ids, item.supporting_doc_ids, 2) if has_gold_passages else None,
        recall_at_5=recall_at_k(passage_ids, item.supporting_doc_ids, 5) if has_gold_passages else None,
        answer_in_evidence=item.answerable and answer_in_text(item.answers, texts),
        evidence_tokens=result.evidence_tokens, latency_ms=seconds * 1000, evidence=texts,
        passage_ids=passage_ids, family=runner.strategy.name, budget=runner.budget,
        token_budget=runner.token_budget,
    )  # fmt: skip


def run_eval(
    strategies: Sequence[EvalRunner],
    items: Sequence[EvalItem],
    progress: Callable[[int], None] | None = None,
    budgets: Sequence[int] = PASSAGE_BUDGETS,
    token_budgets: Sequence[int] = (),
) -> list[Record]:
    """Every strategy on every item; passage baselines also at top-k ``budgets`` (``()``: only as
    given), or, with ``token_budgets``, every strategy at each of those evidence-token budgets."""
    runners = (
        at_token_budgets(strategies, token_budgets) if token_budgets else with_budgets(strategies, budgets)
    )
    records: list[Record] = []
    for item in items:
        for strategy in runners:
            records.append(score(strategy, item))
        if progress:
            progress(1)
    return records


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return sum(present) / len(present) if present else None


def summarize(records: Sequence[Record]) -> list[dict[str, object]]:
    """One row per strategy, in first-seen order."""
    rows = []
    for name in dict.fromkeys(r.strategy for r in records):
        mine = [r for r in records if r.strategy == name]
        answerable = [r for r in mine if r.answerable]
        unanswerable = [r for r in mine if not r.answerable]
        latencies = [r.latency_ms for r in mine]
        rows.append({
            "strategy": name, "family": mine[0].family or name, "budget": mine[0].budget,
            "token_budget": mine[0].token_budget, "questions": len(mine),
            "em": _mean([r.em for r in answerable]), "f1": _mean([r.f1 for r in answerable]),
            "recall@2": _mean([r.recall_at_2 for r in answerable]),
            "recall@5": _mean([r.recall_at_5 for r in answerable]),
            "answer_in_evidence": _mean([float(r.answer_in_evidence) for r in answerable]),
            "evidence_tokens_mean": statistics.fmean(r.evidence_tokens for r in mine),
            "evidence_tokens_median": statistics.median(r.evidence_tokens for r in mine),
            "latency_p50_ms": percentile(latencies, 50), "latency_p95_ms": percentile(latencies, 95),
            "refusal_accuracy": _mean([float(bool(r.refused)) for r in unanswerable if r.refused is not None]),
            "na_rate_answerable": _mean([float(bool(r.refused)) for r in answerable if r.refused is not None]),
        })  # fmt: skip
    return rows


def records_as_dicts(records: Sequence[Record]) -> list[dict[str, object]]:
    return [asdict(r) for r in records]

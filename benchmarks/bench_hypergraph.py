"""Offline ``hypergraph`` asks on the MuSiQue memory: latency per question, steps taken, and quality.

    python benchmarks/bench_hypergraph.py [--limit N] [--repeat 1] [--baselines] [--out FILE]

1. Memory: the MuSiQue corpus (1,890 passages), offline ingest (skipped for
   documents already ingested in the namespace, so a second run only measures).
2. Each of the 50 MuSiQue dev questions is asked with the offline
   ``hypergraph`` strategy (no LLM): per-question latency p50/p95, the number
   of memory steps each took (and p50 latency per step count), why runs
   stopped, and the stage medians.
3. The same runs scored by the evaluation harness: recall@2/@5 of the gold
   passages, answer in evidence, EM/F1, evidence tokens. ``--baselines`` adds
   chain search (gold decompositions) and the BM25 / dense top-5 baselines on
   the same memory, for a side-by-side table.

Nothing here is tuned: the strategy runs with its recipe defaults.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from bench_support import SHARED, bench_settings, local_neo4j, median, percentile

from engramdb.ingestion.loaders import load_path
from engramdb.platform.interfaces.memory import Memory
from engramdb.retrieval.eval.data import EvalItem, load_dataset
from engramdb.retrieval.eval.harness import EvalRunner, Record, score, summarize
from engramdb.retrieval.hypergraph.strategy import HypergraphDetails
from engramdb.retrieval.rerankers import OfflineReranker
from engramdb.retrieval.results import AskResult
from engramdb.retrieval.strategy import AskContext, make_strategy


@dataclass
class RecordingRunner(EvalRunner):
    """An evaluation runner that also keeps each result (for its memory steps and stage timings)."""

    results: list[AskResult] = field(default_factory=list)

    def run(self, item: EvalItem) -> tuple[AskResult, float]:
        result, seconds = super().run(item)
        self.results.append(result)
        return result, seconds


def ensure(memory: Memory, corpus: Path) -> dict:
    docs = load_path(corpus)
    report = memory.ingest(docs)
    return {"passages": len(docs), "ingested_now": report.ingested, **memory.stats()}


def hypergraph_profile(runner: RecordingRunner, records: list[Record]) -> dict:
    """Latency and steps of the hypergraph runs."""
    latencies = [r.latency_ms for r in records]
    steps = [r.details.steps_taken for r in runner.results if isinstance(r.details, HypergraphDetails)]
    by_steps: dict[int, list[float]] = {}
    for n, ms in zip(steps, latencies, strict=True):
        by_steps.setdefault(n, []).append(ms)
    stages: dict[str, list[float]] = {}
    for result in runner.results:
        for key, value in result.timings.items():
            stages.setdefault(key, []).append(value * 1000)
    reasons = Counter(
        r.details.stop_reason.split(" (")[0]
        for r in runner.results
        if isinstance(r.details, HypergraphDetails)
    )
    return {
        "asks": len(latencies), "p50_ms": median(latencies), "p95_ms": percentile(latencies, 95),
        "steps_p50": statistics.median(steps), "steps_mean": statistics.fmean(steps),
        "steps_histogram": dict(sorted(Counter(steps).items())),
        "p50_ms_by_steps": {n: median(v) for n, v in sorted(by_steps.items())},
        "stop_reasons": dict(reasons.most_common()),
        "stage_median_ms": {k: median(v) for k, v in stages.items()},
        "na_answers": sum(1 for r in runner.results if r.is_na),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--limit", type=int, help="Only the first N questions.")
    parser.add_argument("--repeat", type=int, default=1, help="Ask every question this many times.")
    parser.add_argument("--baselines", action="store_true", help="Also run chain (gold), bm25 and dense.")
    parser.add_argument("--namespace", default="bench-musique")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    settings = bench_settings()
    corpus = SHARED / "data" / "musique" / "corpus.json"
    items = load_dataset(SHARED / "data" / "musique" / "questions.json")[: args.limit]
    out: dict = {}
    with local_neo4j(settings), Memory(args.namespace, settings) as memory:
        out["memory"] = ensure(memory, corpus)
        context = AskContext(
            memory.graph, memory.vectors, memory.embedder, OfflineReranker(), chat_model=None
        )
        hypergraph = RecordingRunner(make_strategy("hypergraph", context), "offline")
        runners: list[EvalRunner] = [hypergraph]
        if args.baselines:
            runners += [EvalRunner(make_strategy("chain", context), "gold")]
            runners += [EvalRunner(make_strategy(name, context), "offline") for name in ("bm25", "dense")]
        hypergraph.run(items[0])  # warm-up (models, query plans); not measured
        hypergraph.results.clear()
        records: list[Record] = []
        for _ in range(args.repeat):
            for item in items:
                records.extend(score(runner, item) for runner in runners)
    mine = [r for r in records if r.strategy == "hypergraph"]
    out["hypergraph"] = hypergraph_profile(hypergraph, mine)
    out["summary"] = summarize(records)
    m, h = out["memory"], out["hypergraph"]
    print(f"memory: {m['documents']} passages, {m['qa_pairs']} QA pairs, {m['entities']} entities")
    print(f"hypergraph offline: p50 {h['p50_ms']:.0f} ms, p95 {h['p95_ms']:.0f} ms over {h['asks']} asks; "
          f"steps p50 {h['steps_p50']}, mean {h['steps_mean']:.2f}, histogram {h['steps_histogram']}")  # fmt: skip
    print("  p50 ms by steps taken: " + ", ".join(f"{n}: {v:.0f}" for n, v in h["p50_ms_by_steps"].items()))
    print("  stop reasons: " + ", ".join(f"{k}: {v}" for k, v in h["stop_reasons"].items()))
    print("  stage medians (ms): " + ", ".join(f"{k} {v:.0f}" for k, v in h["stage_median_ms"].items()))
    print("| strategy | EM | F1 | R@2 | R@5 | answer in evidence | tokens (mean) | p50 ms | p95 ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in out["summary"]:
        cells = [_pct(row["em"]), _pct(row["f1"]), _pct(row["recall@2"]), _pct(row["recall@5"]),
                 _pct(row["answer_in_evidence"]), f"{row['evidence_tokens_mean']:.0f}",
                 f"{row['latency_p50_ms']:.0f}", f"{row['latency_p95_ms']:.0f}"]  # fmt: skip
        print(f"| {row['strategy']} | " + " | ".join(cells) + " |")
    if args.out:
        args.out.write_text(json.dumps(out, indent=2, default=str))


def _pct(value: object) -> str:
    return "—" if value is None else f"{100 * float(value):.1f}%"  # type: ignore[arg-type]


if __name__ == "__main__":
    main()

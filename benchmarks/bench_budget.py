"""Ask latency with a token budget against without one, for every strategy, in one run.

    python benchmarks/bench_budget.py [--budget 256] [--repeat 2] [--limit 50] [--strategies a,b] [--out FILE]

Memory: the MuSiQue corpus (1,890 passages), offline ingest with every default
stage (skipped when already ingested in the namespace). Each MuSiQue question
is asked by each strategy twice in a row, once as today (no budget) and once
with ``--budget``, alternating which goes first, so both see the same caches
and machine load. Reported per strategy: median and p95 latency of each, the
ratio of the medians (budget / none), and the mean evidence tokens of each.
The question set only drives the timing; no answer is scored here.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from bench_support import SHARED, bench_settings, local_neo4j, median, percentile

from engramdb.ingestion.loaders import load_path
from engramdb.platform.interfaces.memory import Memory
from engramdb.retrieval.strategy import strategy_names


def timed_ask(memory: Memory, question: str, strategy: str, budget: int | None) -> tuple[float, int]:
    started = time.perf_counter()
    result = memory.ask(question, strategy=strategy, budget=budget)
    return (time.perf_counter() - started) * 1000, result.evidence_tokens


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--budget", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--strategies", help="comma-separated strategy names (default: all)")
    args = parser.parse_args()
    settings = bench_settings()
    questions = json.loads((SHARED / "data" / "musique" / "questions.json").read_text())[: args.limit]
    results: dict[str, dict] = {}
    with local_neo4j(settings), Memory("bench-budget", settings) as memory:
        memory.ingest(load_path(SHARED / "data" / "musique" / "corpus.json"))
        for name in args.strategies.split(",") if args.strategies else strategy_names():
            for budget in (None, args.budget):  # warm-up: models, calibrations, snapshots
                memory.ask(questions[0]["question"], strategy=name, budget=budget)
            runs: dict[str, list[tuple[float, int]]] = {"none": [], "budget": []}
            for r in range(args.repeat):
                for i, item in enumerate(questions):
                    order = [None, args.budget] if (i + r) % 2 == 0 else [args.budget, None]
                    for budget in order:
                        key = "none" if budget is None else "budget"
                        runs[key].append(timed_ask(memory, item["question"], name, budget))
            row = {}
            for key, values in runs.items():
                ms = [v[0] for v in values]
                row[key] = {"p50_ms": median(ms), "p95_ms": percentile(ms, 95),
                            "tokens_mean": sum(v[1] for v in values) / len(values)}  # fmt: skip
            row["ratio_p50"] = row["budget"]["p50_ms"] / row["none"]["p50_ms"]
            results[name] = row
            print(f"{name:<11} none p50 {row['none']['p50_ms']:7.1f} ms ({row['none']['tokens_mean']:4.0f} tok)  "
                  f"@{args.budget} p50 {row['budget']['p50_ms']:7.1f} ms ({row['budget']['tokens_mean']:4.0f} tok)  "
                  f"ratio {row['ratio_p50']:.2f}", flush=True)  # fmt: skip
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

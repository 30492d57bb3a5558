"""Retrieval-only latency of ``ask`` (no LLM calls) and how it grows with memory size.

    python benchmarks/bench_ask.py [--repeat 3] [--skip-2wiki] [--out FILE]

1. Memory A: the MuSiQue corpus (1,890 passages), offline ingest.
2. Every one of the 50 MuSiQue questions is asked with its gold decomposition
   (chain beam search, offline reranker, offline answer); per-question
   latency p50/p95 over all runs, plus a per-stage breakdown.
3. Memory B: MuSiQue + the 6,119 2Wiki passages in one namespace; the same
   questions again, to show how cost grows with memory size.
Ingestion is skipped for documents already ingested in a namespace, so a
second run only measures.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from bench_support import SHARED, bench_settings, local_neo4j, median, percentile

from engramdb.ingestion.loaders import load_path
from engramdb.platform.interfaces.memory import Memory
from engramdb.retrieval.decomposition import from_musique


def measure(memory: Memory, questions: list[dict], repeat: int) -> dict:
    memory.ask(questions[0]["question"], decomposition=from_musique(questions[0]["question_decomposition"]))
    latencies: list[float] = []
    stages: dict[str, list[float]] = {}
    for _ in range(repeat):
        for item in questions:
            decomposition = from_musique(item["question_decomposition"])
            started = time.perf_counter()
            result = memory.ask(item["question"], decomposition=decomposition)
            latencies.append((time.perf_counter() - started) * 1000)
            for key, value in result.timings.items():
                if key.startswith("search_") or key in ("decompose", "citations", "answer"):
                    stages.setdefault(key, []).append(value * 1000)
    return {
        "questions": len(questions), "runs": len(latencies), "p50_ms": median(latencies),
        "p95_ms": percentile(latencies, 95), "stage_median_ms": {k: median(v) for k, v in stages.items()},
    }  # fmt: skip


def ensure(memory: Memory, corpora: list[Path]) -> dict:
    docs = [d for c in corpora for d in load_path(c)]
    report = memory.ingest(docs)
    return {
        "passages": len(docs),
        "ingested_now": report.ingested,
        "seconds": report.seconds,
        **memory.stats(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-2wiki", action="store_true")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    settings = bench_settings()
    musique = SHARED / "data" / "musique" / "corpus.json"
    wiki = SHARED / "data" / "2wiki" / "corpus.json"
    questions = json.loads((SHARED / "data" / "musique" / "questions.json").read_text())
    results: dict = {}
    with local_neo4j(settings):
        with Memory("bench-musique", settings) as memory:
            results["musique"] = {
                "memory": ensure(memory, [musique]),
                **measure(memory, questions, args.repeat),
            }
        if not args.skip_2wiki:
            with Memory("bench-musique-2wiki", settings) as memory:
                results["musique+2wiki"] = {
                    "memory": ensure(memory, [musique, wiki]),
                    **measure(memory, questions, args.repeat),
                }
    for name, r in results.items():
        m = r["memory"]
        print(f"{name}: {m['documents']} passages, {m['qa_pairs']} QA pairs, {m['entities']} entities -> "
              f"p50 {r['p50_ms']:.1f} ms, p95 {r['p95_ms']:.1f} ms over {r['runs']} asks")  # fmt: skip
        print("   stage medians (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in r["stage_median_ms"].items()))
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

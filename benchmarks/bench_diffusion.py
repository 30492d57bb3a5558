"""The ``diffusion`` strategy: latency without LLM calls, snapshot cost, and (``--quality``) MuSiQue quality.

    python benchmarks/bench_diffusion.py [--repeat 1] [--skip-2wiki] [--quality] [--out FILE]

Latency (default):
1. Memory A: the MuSiQue corpus (1,890 passages), offline ingest, then the
   ``gists`` memory stage (gists and fact vectors).
2. The walk snapshot is built once from scratch (its build time is reported
   apart), the offline N/A threshold is calibrated by a first question (also
   reported apart), then all 50 MuSiQue questions are asked offline (rule
   split, offline answer; no LLM): per-question p50/p95 and stage medians.
3. Memory B: MuSiQue + the 6,119 2Wiki passages in one namespace, the same
   again; the p50 ratio B/A says how latency grows with memory.
Ingestion and indexing skip what a namespace already has, so a second run only measures.

Quality (``--quality``, memory A): passage recall@2/@5 of the gold supporting
paragraphs, answer-in-evidence, offline EM, evidence tokens and latency for
BM25 and dense top-5, diffusion with its defaults, chain search (gold
decompositions, as in the README table) and a one-knob-at-a-time ablation of
ε, the restart probability and K. Nothing here is tuned: the defaults are the
papers' (see ``retrieval/diffusion.py``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from bench_support import SHARED, bench_settings, local_neo4j, median, percentile
from pydantic import SecretStr

from engramdb.ingestion.gists import GistStage
from engramdb.ingestion.loaders import load_path
from engramdb.ingestion.stages import StageContext
from engramdb.platform.config import Settings
from engramdb.platform.memory import Memory
from engramdb.platform.neo4j_server import LocalNeo4j
from engramdb.retrieval.chain_strategy import ChainStrategy
from engramdb.retrieval.diffusion import DiffusionRecipe, DiffusionStrategy, SnapshotCache, read_fingerprint
from engramdb.retrieval.eval_data import load_dataset
from engramdb.retrieval.evaluation import EvalRunner, run_eval, summarize
from engramdb.retrieval.passage_strategies import BM25Passages, DensePassages
from engramdb.retrieval.rerankers import OfflineReranker
from engramdb.retrieval.strategy import AskContext

#: One knob changed at a time from the defaults (ε = 0.95, restart 0.5, K = 5).
ABLATION: list[dict[str, Any]] = [
    {"epsilon": 1.0}, {"epsilon": 0.9}, {"epsilon": 0.5}, {"epsilon": 0.0},
    {"restart_probability": 0.15}, {"restart_probability": 0.3}, {"restart_probability": 0.8},
    {"fact_top_k": 2}, {"fact_top_k": 10}, {"fact_top_k": 20},
]  # fmt: skip


def ensure(memory: Memory, corpora: list[Path]) -> dict[str, Any]:
    docs = [d for c in corpora for d in load_path(c)]
    report = memory.ingest(docs)
    t0 = time.perf_counter()
    stage = GistStage(StageContext(memory.graph, memory.vectors, memory.embedder)).index_namespace()
    return {
        "passages": len(docs), "ingested_now": report.ingested, "ingest_seconds": report.seconds,
        "stage_chunks_now": stage.chunks, "stage_seconds": time.perf_counter() - t0, "stage_written": stage.written,
        **memory.stats(),
    }  # fmt: skip


def context(memory: Memory) -> AskContext:
    return AskContext(memory.graph, memory.vectors, memory.embedder, OfflineReranker())


def snapshot_costs(memory: Memory) -> dict[str, float]:
    """A from-scratch snapshot build (what a refresh costs) and the per-question freshness check."""
    fresh = SnapshotCache()
    t0 = time.perf_counter()
    snapshot, _ = fresh.current(memory.graph, memory.vectors, memory.embedder.dim)
    build = time.perf_counter() - t0
    checks = []
    for _ in range(20):
        t0 = time.perf_counter()
        read_fingerprint(memory.graph)
        checks.append(time.perf_counter() - t0)
    return {
        "build_ms": build * 1000, "export_and_matrix_ms": snapshot.build_seconds * 1000,
        "fingerprint_check_ms": median(checks) * 1000, "nodes": snapshot.size, "edges": snapshot.edges,
        "entities": snapshot.entities, "chunks": len(snapshot.chunk_ids),
    }  # fmt: skip


def latency(memory: Memory, questions: list[dict], repeat: int) -> dict[str, Any]:
    strategy = DiffusionStrategy(context(memory))
    t0 = time.perf_counter()
    strategy.ask(questions[0]["question"])  # builds the snapshot and calibrates the N/A threshold
    first = time.perf_counter() - t0
    latencies: list[float] = []
    stages: dict[str, list[float]] = {}
    splits = 0
    for _ in range(repeat):
        for item in questions:
            started = time.perf_counter()
            result = strategy.ask(item["question"])
            latencies.append((time.perf_counter() - started) * 1000)
            splits += len(result.details.sub_questions) > 1
            for key, value in result.timings.items():
                stages.setdefault(key, []).append(value * 1000)
            for walk in result.details.walks:
                stages.setdefault("walk", []).append(walk["ms"])
    return {
        "first_question_ms": first * 1000, "runs": len(latencies), "split_questions": splits,
        "p50_ms": median(latencies), "p95_ms": percentile(latencies, 95),
        "stage_median_ms": {k: median(v) for k, v in stages.items()},
    }  # fmt: skip


def quality(memory: Memory, dataset: Path) -> list[dict[str, Any]]:
    items = load_dataset(dataset)
    ctx = context(memory)
    runners = [
        EvalRunner(BM25Passages(ctx), "offline"),
        EvalRunner(DensePassages(ctx), "offline"),
        EvalRunner(ChainStrategy(ctx), "gold"),
        EvalRunner(DiffusionStrategy(ctx), "offline"),
    ]
    rows = summarize(run_eval(runners, items))
    for row, runner in zip(rows, runners, strict=True):
        row["strategy"] = (
            f"{runner.name} ({runner.decomposition} decomposition)" if runner.name == "chain" else runner.name
        )
    for change in ABLATION:
        strategy = DiffusionStrategy(ctx, DiffusionRecipe(**change))
        row = summarize(run_eval([EvalRunner(strategy, "offline")], items))[0]
        row["strategy"] = "diffusion " + ", ".join(f"{k}={v}" for k, v in change.items())
        rows.append(row)
    return rows


def print_quality(rows: list[dict[str, Any]]) -> None:
    def pct(value: Any) -> str:
        return "—" if value is None else f"{100 * value:.1f}%"

    print("| strategy | EM | R@2 | R@5 | answer in evidence | evidence tokens (mean) | p50 ms |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['strategy']} | {pct(r['em'])} | {pct(r['recall@2'])} | {pct(r['recall@5'])} | "
              f"{pct(r['answer_in_evidence'])} | {r['evidence_tokens_mean']:.0f} | {r['latency_p50_ms']:.0f} |")  # fmt: skip


def settings_b(settings: Settings, server: LocalNeo4j, home: Path | None) -> Settings:
    """The settings of memory B: the same Neo4j, and its own data home (vector store) if one is given."""
    if home is None:
        return settings
    update: dict[str, Any] = {"home": home}
    if settings.uses_local_neo4j:
        update.update({"neo4j_uri": server.bolt_uri, "neo4j_password": SecretStr(server.password())})
    return settings.model_copy(update=update)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--skip-2wiki", action="store_true")
    parser.add_argument(
        "--quality", action="store_true", help="also run the MuSiQue quality table and ablation"
    )
    parser.add_argument(
        "--home-b", type=Path,
        help="data home of the MuSiQue+2Wiki memory (default: the benchmark home); lets its long ingest run apart",
    )  # fmt: skip
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    settings = bench_settings()
    musique = SHARED / "data" / "musique" / "corpus.json"
    wiki = SHARED / "data" / "2wiki" / "corpus.json"
    dataset = SHARED / "data" / "musique" / "questions.json"
    questions = json.loads(dataset.read_text())
    results: dict[str, Any] = {}
    with local_neo4j(settings) as server:
        with Memory("bench-musique", settings) as memory:
            results["musique"] = {"memory": ensure(memory, [musique]), "snapshot": snapshot_costs(memory),
                                  **latency(memory, questions, args.repeat)}  # fmt: skip
            if args.quality:
                results["quality"] = quality(memory, dataset)
        if not args.skip_2wiki:
            with Memory("bench-musique-2wiki", settings_b(settings, server, args.home_b)) as memory:
                results["musique+2wiki"] = {"memory": ensure(memory, [musique, wiki]), "snapshot": snapshot_costs(memory),
                                            **latency(memory, questions, args.repeat)}  # fmt: skip
    for name in ("musique", "musique+2wiki"):
        if name not in results:
            continue
        r, m, s = results[name], results[name]["memory"], results[name]["snapshot"]
        print(f"{name}: {m['documents']} passages, {s['entities']} entities, {s['edges']} walk edges -> "
              f"p50 {r['p50_ms']:.1f} ms, p95 {r['p95_ms']:.1f} ms over {r['runs']} asks "
              f"({r['split_questions']} split); first question {r['first_question_ms']:.0f} ms")  # fmt: skip
        print(f"   snapshot: build {s['build_ms']:.0f} ms (export+matrix {s['export_and_matrix_ms']:.0f} ms), "
              f"freshness check {s['fingerprint_check_ms']:.1f} ms per question")  # fmt: skip
        print("   stage medians (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in r["stage_median_ms"].items()))
    if "musique+2wiki" in results:
        ratio = results["musique+2wiki"]["p50_ms"] / results["musique"]["p50_ms"]
        results["p50_ratio"] = ratio
        print(f"p50 ratio (MuSiQue+2Wiki / MuSiQue): {ratio:.2f}x")
    if "quality" in results:
        print_quality(results["quality"])
    if args.out:
        args.out.write_text(json.dumps(results, indent=2, default=str))


if __name__ == "__main__":
    main()

"""The ``diffusion`` strategy: latency without LLM calls as memory grows, snapshot cost, and quality.

    python benchmarks/bench_diffusion.py [--namespace bench-diffusion] [--vector-home DIR] [--repeat 1]
                                         [--warmup 10] [--skip-2wiki] [--quality] [--out FILE]

Latency, in one run and one namespace, on two memories:

* **MuSiQue**: the MuSiQue corpus (1,890 passages, offline ingest with the
  ``gists`` stage; skipped when the namespace already has it);
* **MuSiQue + 2Wiki**: the same namespace after the 6,119 2Wiki passages are
  ingested into it.

A run measures both. When the namespace holds only MuSiQue it measures that,
ingests 2Wiki (the long part: run the benchmark in the background) and
measures again; when a previous run left 2Wiki in it, it measures that, deletes
the 2Wiki passages (timed) and measures MuSiQue alone. Either way every
ingest or delete is done once and both memories are measured by the same
process with the same strategy object, which must notice each change itself:
its first question after the change refreshes the walk snapshot (refresh time
reported apart, with the first from-scratch build). Per memory: the first
question (snapshot and offline N/A calibration), ``--warmup`` untimed passes
over the questions (Neo4j's JIT and page cache, as in a process that has been
serving; without them, whichever memory is timed right after the server
starts looks slower), then the 50 MuSiQue questions asked offline (rule split,
offline answer; no LLM), p50/p95 and stage medians.
The p50 ratio (MuSiQue + 2Wiki) / MuSiQue says how latency grows with memory.

``--vector-home`` keeps this memory's vector store (a qdrant-edge store has one
owning process) in its own folder while Neo4j stays the benchmark home's
server, so the long ingest can run beside other work on the benchmark home.

Quality (``--quality``, on the MuSiQue memory): passage recall@2/@5 of the gold
supporting paragraphs, answer-in-evidence, offline EM, evidence tokens and
latency for BM25 and dense (top 1, 2, 3, 5), chain search (gold
decompositions, as in the README table), diffusion with its defaults and a
one-knob-at-a-time ablation of ε, the restart probability and K. Nothing is
tuned: the defaults are the papers' (see ``retrieval/diffusion/strategy.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from bench_support import SHARED, bench_settings, forget_question_vectors, local_neo4j, median, percentile
from pydantic import SecretStr

from engramdb.ingestion.documents import Document
from engramdb.ingestion.loaders import load_path
from engramdb.platform.config import Settings
from engramdb.platform.interfaces.memory import Memory
from engramdb.platform.neo4j_server import LocalNeo4j
from engramdb.retrieval.chain.strategy import ChainStrategy
from engramdb.retrieval.diffusion.strategy import (
    DiffusionRecipe,
    DiffusionStrategy,
    SnapshotCache,
    WalkSnapshot,
)
from engramdb.retrieval.eval.data import load_dataset
from engramdb.retrieval.eval.harness import EvalRunner, run_eval, summarize
from engramdb.retrieval.passages import BM25Passages, DensePassages
from engramdb.retrieval.rerankers import OfflineReranker
from engramdb.retrieval.strategy import AskContext

#: One knob changed at a time from the defaults (ε = 0.95, restart 0.5, K = 5).
ABLATION: list[dict[str, Any]] = [
    {"epsilon": 1.0}, {"epsilon": 0.9}, {"epsilon": 0.8}, {"epsilon": 0.5}, {"epsilon": 0.0},
    {"restart_probability": 0.15}, {"restart_probability": 0.3}, {"restart_probability": 0.7},
    {"fact_top_k": 2}, {"fact_top_k": 10}, {"fact_top_k": 20},
    {"gists": False},  # passages only: the same ranking at the evidence tokens of dense top-5
]  # fmt: skip


def ingest(memory: Memory, docs: list[Document]) -> dict[str, Any]:
    """Ingest (the configured ``gists`` stage runs with it); skips what the namespace already has."""
    t0 = time.perf_counter()
    report = memory.ingest(docs)
    index = memory.index(["gists"])  # chunks a crashed earlier run left without gists
    return {
        "passages": len(docs), "ingested_now": report.ingested, "skipped": report.skipped,
        "seconds": time.perf_counter() - t0, "gists_indexed_after": sum(r.chunks for r in index),
    }  # fmt: skip


def present(memory: Memory, docs: list[Document]) -> list[str]:
    """Ids of these documents that the namespace holds."""
    ids = [d.id for d in docs]
    return [r["id"] for r in memory.graph.read("traversals/get_documents", ids=ids)]


def context(memory: Memory) -> AskContext:
    return AskContext(memory.graph, memory.vectors, memory.embedder, OfflineReranker())


def snapshot_numbers(snapshot: WalkSnapshot) -> dict[str, Any]:
    return {
        "nodes": snapshot.size, "entities": snapshot.entities, "chunks": len(snapshot.chunk_ids),
        "edges": snapshot.edges, "export_and_matrix_ms": snapshot.build_seconds * 1000,
    }  # fmt: skip


def snapshot_build(memory: Memory) -> dict[str, Any]:
    """A from-scratch snapshot build of the memory as the run found it, and the per-question freshness check."""
    t0 = time.perf_counter()
    snapshot, _ = SnapshotCache().current(memory.graph, memory.vectors, memory.embedder.dim)
    build = time.perf_counter() - t0
    checks = []
    for _ in range(20):
        t0 = time.perf_counter()
        memory.graph.memory_version()
        checks.append(time.perf_counter() - t0)
    return {
        "build_ms": build * 1000,
        "fingerprint_check_ms": median(checks) * 1000,
        **snapshot_numbers(snapshot),
    }


def first_ask(strategy: DiffusionStrategy, question: str) -> dict[str, Any]:
    """The first question after a memory change: snapshot refresh and N/A calibration, timed apart."""
    t0 = time.perf_counter()
    result = strategy.ask(question)
    return {
        "first_question_ms": (time.perf_counter() - t0) * 1000, "snapshot_rebuilt": result.details.snapshot["rebuilt"],
        "snapshot_refresh_ms": result.timings["snapshot"] * 1000,
    }  # fmt: skip


def latency(strategy: DiffusionStrategy, questions: list[dict], repeat: int) -> dict[str, Any]:
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
                stages.setdefault("walk_iterations", []).append(walk["iterations"])
    return {
        "runs": len(latencies), "split_questions": splits,
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
    for row in rows:
        if row["strategy"] == "chain":
            row["strategy"] = "chain (gold decomposition)"
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


def warm_up(strategy: DiffusionStrategy, questions: list[dict], passes: int) -> list[float]:
    """``passes`` untimed passes over the questions; the p50 of each, so a report shows it settled.

    A Neo4j server just started answers the same one-node lookup in ~10 ms at first and ~3 ms
    after a thousand or so queries (its JIT compiler at work; measured here), and its page cache
    fills as the questions touch the store. Timing a freshly started server against one that has
    just run a long ingest would measure that, not the memory's size; so each memory is timed
    after as many queries as a process that has been serving for a while has seen.
    """
    return [latency(strategy, questions, 1)["p50_ms"] for _ in range(passes)]


def measure(
    memory: Memory, strategy: DiffusionStrategy, questions: list[dict], repeat: int, warmup: int = 10
) -> dict[str, Any]:
    """One memory: the first question (which refreshes the snapshot if memory changed), ``warmup``
    untimed passes over the questions (:func:`warm_up`), then the timed run.

    Prints a ``measuring`` line before and a ``measured`` line after, so whoever shares the machine
    can keep out of the way of the timed part; the load average during it is recorded with the result.
    """
    print(f"[{time.strftime('%H:%M:%S')}] measuring (load {os.getloadavg()[0]:.1f})", flush=True)
    # Both memories are asked the same 50 questions: without clearing it, the embedder's query cache
    # would hand the second measurement (and the timed pass after the warm-up) their vectors and
    # leave the embedding out of the latency.
    forget_question_vectors(strategy.context.embedder)
    phase = first_ask(strategy, questions[0]["question"])
    snapshot, _ = strategy.snapshots.current(memory.graph, memory.vectors, memory.embedder.dim)
    phase["snapshot"] = snapshot_numbers(snapshot)
    phase["warmup_p50_ms"] = warm_up(strategy, questions, warmup)
    forget_question_vectors(strategy.context.embedder)
    phase.update(latency(strategy, questions, repeat))
    phase["load_average_1min_after"] = os.getloadavg()[0]
    print(
        f"[{time.strftime('%H:%M:%S')}] measured: p50 {phase['p50_ms']:.1f} ms "
        f"(load {phase['load_average_1min_after']:.1f})",
        flush=True,
    )
    return phase


def bench_memory_settings(vector_home: Path | None) -> Settings:
    """The benchmark settings; with ``vector_home``, that folder for the vector store, the home's Neo4j."""
    settings = bench_settings()
    if vector_home is None:
        return settings
    server = LocalNeo4j(settings)
    server.start()
    return settings.model_copy(update={
        "home": vector_home, "neo4j_uri": server.bolt_uri, "neo4j_password": SecretStr(server.password()),
    })  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--namespace", default="bench-diffusion")
    parser.add_argument("--vector-home", type=Path, help="own folder for this memory's vector store")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument(
        "--warmup", type=int, default=10, help="untimed passes over the questions before timing"
    )
    parser.add_argument("--skip-2wiki", action="store_true", help="only the MuSiQue memory")
    parser.add_argument("--quality", action="store_true", help="also the MuSiQue quality table and ablation")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    os.environ.setdefault("ENGRAMDB_STAGES", '["gists"]')  # the stage diffusion needs, and only it
    settings = bench_settings()
    musique_docs = load_path(SHARED / "data" / "musique" / "corpus.json")
    musique_ids = {d.id for d in musique_docs}
    wiki_docs = [d for d in load_path(SHARED / "data" / "2wiki" / "corpus.json") if d.id not in musique_ids]
    dataset = SHARED / "data" / "musique" / "questions.json"
    questions = json.loads(dataset.read_text())
    results: dict[str, Any] = {"namespace": args.namespace}

    def save() -> None:
        if args.out:
            args.out.write_text(json.dumps(results, indent=2, default=str))

    def log(message: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)

    with local_neo4j(settings), Memory(args.namespace, bench_memory_settings(args.vector_home)) as memory:
        results["ingest_musique"] = ingest(memory, musique_docs)
        results["snapshot_build"] = snapshot_build(memory)
        strategy = DiffusionStrategy(context(memory))
        wiki_present = len(present(memory, wiki_docs))
        if args.quality:
            if wiki_present:
                raise SystemExit("--quality needs the MuSiQue memory alone: run once without it first")
            results["quality"] = quality(memory, dataset)
            save()
        if wiki_present and not args.skip_2wiki:
            log(f"{wiki_present} 2Wiki passages present: measuring MuSiQue + 2Wiki, then deleting them")
            results["ingest_2wiki"] = ingest(memory, wiki_docs)  # completes a crashed earlier ingest, if any
            results["musique+2wiki"] = measure(memory, strategy, questions, args.repeat, args.warmup)
            save()
            t0 = time.perf_counter()
            memory.delete_many(present(memory, wiki_docs))
            results["delete_2wiki"] = {"documents": wiki_present, "seconds": time.perf_counter() - t0}
            log(f"deleted in {results['delete_2wiki']['seconds']:.0f} s")
            results["musique"] = measure(memory, strategy, questions, args.repeat, args.warmup)
        else:
            if wiki_present:
                log(f"--skip-2wiki: deleting the {wiki_present} 2Wiki passages a previous run left")
                memory.delete_many(present(memory, wiki_docs))
            results["musique"] = measure(memory, strategy, questions, args.repeat, args.warmup)
            save()
            if not args.skip_2wiki:
                log(f"ingesting {len(wiki_docs)} 2Wiki passages into {args.namespace} ...")
                results["ingest_2wiki"] = ingest(memory, wiki_docs)
                log(f"ingested in {results['ingest_2wiki']['seconds']:.0f} s")
                results["musique+2wiki"] = measure(memory, strategy, questions, args.repeat, args.warmup)
        if "musique+2wiki" in results:
            results["p50_ratio"] = results["musique+2wiki"]["p50_ms"] / results["musique"]["p50_ms"]
        save()
    report(results)


def report(results: dict[str, Any]) -> None:
    b = results["snapshot_build"]
    print(f"snapshot build from scratch (the memory at start): {b['build_ms']:.0f} ms "
          f"(export+matrix {b['export_and_matrix_ms']:.0f} ms); freshness check {b['fingerprint_check_ms']:.1f} ms")  # fmt: skip
    for name in ("musique", "musique+2wiki"):
        if name not in results:
            continue
        r, s = results[name], results[name]["snapshot"]
        print(f"{name}: {s['chunks']} passages, {s['entities']} entities, {s['edges']} walk edges -> "
              f"p50 {r['p50_ms']:.1f} ms, p95 {r['p95_ms']:.1f} ms over {r['runs']} asks ({r['split_questions']} split)")  # fmt: skip
        print(f"   first question {r['first_question_ms']:.0f} ms; snapshot "
              f"{'refreshed in ' + format(r['snapshot_refresh_ms'], '.0f') + ' ms' if r['snapshot_rebuilt'] else 'reused'}")  # fmt: skip
        warm = r.get("warmup_p50_ms")
        if isinstance(warm, list) and warm:
            print("   warm-up passes, p50 ms: " + ", ".join(f"{v:.1f}" for v in warm))
        print("   stage medians (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in r["stage_median_ms"].items()))
    if "p50_ratio" in results:
        print(f"p50 ratio (MuSiQue + 2Wiki) / MuSiQue, same namespace, one run: {results['p50_ratio']:.2f}x")
    for key in ("ingest_musique", "ingest_2wiki", "delete_2wiki"):
        if key in results:
            print(f"{key}: " + ", ".join(f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}"
                                         for k, v in results[key].items()))  # fmt: skip
    if "quality" in results:
        print_quality(results["quality"])


if __name__ == "__main__":
    main()

"""Cluster hierarchy (CAM): growing by a batch against rebuilding, and the ``cluster`` strategy on MuSiQue.

    python benchmarks/bench_clusters.py [--sizes 50 200 800] [--skip-final-rebuild] [--skip-eval] [--out FILE]

Ingest runs no memory stage here (``ENGRAMDB_STAGES=[]``), so every stage run is
one the benchmark starts and times. Growth, offline, in namespace ``bench-clusters``:
1. the 2Wiki corpus (6,119 passages) is ingested (skipped when already there);
2. its hierarchy is rebuilt from scratch (timed: the rebuild a batch is compared to);
3. batches of 50, 200 and 800 MuSiQue passages are ingested one after the other
   (ingest not timed) and each is integrated by the stage (timed), so each batch
   meets a memory that already holds 2Wiki and the batches before it;
4. the hierarchy is rebuilt once more over everything (timed).
The MuSiQue passages of an earlier run are removed at the start (before the
rebuild), so a run can be repeated.

Evaluation: the MuSiQue corpus in namespace ``bench-clusters-musique``, its
hierarchy rebuilt, then the 50 dev questions through ``cluster``, ``dense`` and
``bm25`` (recall@5, answer in evidence, tokens, latency, EM/F1 offline).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from bench_support import SHARED, bench_settings, local_neo4j

from engramdb.ingestion.clusters import ClusterStage
from engramdb.ingestion.loaders import load_path
from engramdb.ingestion.stages import StageContext, StageReport
from engramdb.platform.memory import Memory


def stage_for(memory: Memory) -> ClusterStage:
    return ClusterStage(StageContext(memory.graph, memory.vectors, memory.embedder))


def shape(stage: ClusterStage) -> dict[int, int]:
    return {row["level"]: row["clusters"] for row in stage.level_counts()}


def remove_documents(memory: Memory, doc_ids: list[str]) -> int:
    """Take the batches of an earlier run out of memory (the rebuild that follows clears the hierarchy)."""
    present = set(memory.document_status(doc_ids))
    for doc_id in doc_ids:
        if doc_id in present:
            memory.delete(doc_id)
    return len(present)


def summary_of(report: StageReport, seconds: float) -> dict:
    return {"seconds": round(seconds, 2), "chunks": report.chunks, **report.written}


def growth(settings, sizes: list[int], final_rebuild: bool) -> dict:
    wiki = load_path(SHARED / "data" / "2wiki" / "corpus.json")
    musique = load_path(SHARED / "data" / "musique" / "corpus.json")
    results: dict = {"sizes": sizes}
    with Memory("bench-clusters", settings) as memory:
        stage = stage_for(memory)
        removed = remove_documents(memory, [d.id for d in musique[: sum(sizes)]])
        ingest = memory.ingest(wiki)
        results["base"] = {
            "passages": len(wiki),
            "ingest_seconds": round(ingest.seconds, 1),
            "removed_leftovers": removed,
        }
        t0 = time.perf_counter()
        report = stage.rebuild()
        results["rebuild_base"] = {**summary_of(report, time.perf_counter() - t0), "shape": shape(stage)}
        print(
            f"rebuild over {report.chunks} chunks: {results['rebuild_base']['seconds']} s, shape {shape(stage)}",
            flush=True,
        )
        health = stage.health()
        results["health_after_rebuild"] = health
        start = 0
        results["batches"] = []
        for size in sizes:
            batch = musique[start : start + size]
            start += size
            ingested = memory.ingest(batch)
            t0 = time.perf_counter()
            report = stage.index_namespace()
            seconds = time.perf_counter() - t0
            row = {**summary_of(report, seconds), "batch": size, "ingest_seconds": round(ingested.seconds, 1),
                   "shape": shape(stage)}  # fmt: skip
            results["batches"].append(row)
            print(f"+{size} passages ({report.chunks} chunks): {seconds:.2f} s, {report.written.get('summaries', 0)} "
                  f"clusters re-summarised, shape {row['shape']}", flush=True)  # fmt: skip
        results["health_after_growth"] = stage.health()
        if final_rebuild:
            t0 = time.perf_counter()
            report = stage.rebuild()
            results["rebuild_final"] = {**summary_of(report, time.perf_counter() - t0), "shape": shape(stage)}
            print(f"rebuild over {report.chunks} chunks: {results['rebuild_final']['seconds']} s, "
                  f"shape {shape(stage)}", flush=True)  # fmt: skip
    first = results["batches"][0]["seconds"]
    results["rebuild_over_first_batch"] = (
        round(results["rebuild_base"]["seconds"] / first, 1) if first else None
    )
    times = [b["seconds"] for b in results["batches"]]
    results["growth_exponent"] = _exponent(sizes, times)
    return results


def _exponent(sizes: list[int], times: list[float]) -> float | None:
    """Slope of log(time) over log(batch size): below 1 means sublinear growth."""
    import math

    if len(sizes) < 2 or min(times) <= 0:
        return None
    xs, ys = [math.log(s) for s in sizes], [math.log(t) for t in times]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return round(
        sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs), 3
    )


def evaluation(settings) -> dict:
    from engramdb.retrieval.cluster_strategy import ClusterStrategy
    from engramdb.retrieval.eval_data import load_dataset
    from engramdb.retrieval.evaluation import EvalRunner, run_eval, summarize
    from engramdb.retrieval.passage_strategies import BM25Passages, DensePassages
    from engramdb.retrieval.rerankers import OfflineReranker
    from engramdb.retrieval.strategy import AskContext

    items = load_dataset(SHARED / "data" / "musique" / "questions.json")
    with Memory("bench-clusters-musique", settings) as memory:
        memory.ingest(load_path(SHARED / "data" / "musique" / "corpus.json"))
        stage = stage_for(memory)
        t0 = time.perf_counter()
        report = stage.rebuild()  # the hierarchy of the current stage code, from scratch
        build = {**summary_of(report, time.perf_counter() - t0), "shape": shape(stage)}
        context = AskContext(memory.graph, memory.vectors, memory.embedder, OfflineReranker())
        cluster = ClusterStrategy(context)
        t0 = time.perf_counter()
        threshold = cluster.na_threshold()
        threshold_seconds = time.perf_counter() - t0
        runners = [EvalRunner(cluster), EvalRunner(DensePassages(context)), EvalRunner(BM25Passages(context))]
        records = run_eval(runners, items)
    rows = summarize(records)
    for row in rows:
        print(
            "  " + ", ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items())
        )
    return {
        "build": build,
        "na_threshold": threshold,
        "na_threshold_seconds": round(threshold_seconds, 2),
        "summary": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 200, 800])
    parser.add_argument("--skip-final-rebuild", action="store_true")
    parser.add_argument("--skip-growth", action="store_true")
    parser.add_argument("--skip-eval", action="store_true")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    # Ingest writes the GSW only: the stage runs are what is timed.
    os.environ.setdefault("ENGRAMDB_STAGES", "[]")
    settings = bench_settings()
    results: dict = {}
    with local_neo4j(settings):
        if not args.skip_growth:
            results["growth"] = growth(settings, args.sizes, not args.skip_final_rebuild)
            g = results["growth"]
            print(
                f"rebuild / first batch: {g['rebuild_over_first_batch']}x; time ~ size^{g['growth_exponent']}"
            )
        if not args.skip_eval:
            results["musique"] = evaluation(settings)
    if args.out:
        args.out.write_text(json.dumps(results, indent=2, default=str))


if __name__ == "__main__":
    main()

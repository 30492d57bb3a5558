"""Cluster hierarchy (CAM): integrating a new batch into a big memory, against rebuilding it from scratch.

    python benchmarks/bench_clusters.py [--sizes 50 200 800] [--repeats 3] [--rebuilds 1] [--out FILE]
                                        [--namespace NAME] [--base-limit N]

Offline, in namespace ``bench-clusters`` (``--namespace``; ingest runs no memory stage here, so
every stage run is one the benchmark starts and times):

1. the 2Wiki corpus (6,119 passages) and as many MuSiQue passages as the
   biggest batch needs are ingested (skipped when already there; not timed;
   ``--base-limit`` takes only the first N 2Wiki passages, for a quick trial);
2. **rebuild**: the hierarchy is cleared and built from scratch over the 2Wiki
   chunks, every chunk in one growth step (timed, ``--rebuilds`` times);
3. **growth**: for each batch size, ``--repeats`` different windows of MuSiQue
   chunks are integrated into that memory (timed), each followed by its
   removal through the stage's incremental delete path (timed too), which
   brings the memory back to the 2Wiki hierarchy for the next repetition. A
   chunk that is ingested but not indexed is no part of the hierarchy (no
   link points at it), so the MuSiQue chunks waiting in memory change nothing;
4. **rebuild with the biggest batch**: cleared and built once more over the
   2Wiki chunks plus the biggest batch (timed), the from-scratch cost of the
   memory the biggest batch produces.

Reported: medians per batch size, the rebuild / 50-chunk ratio, and the slope
of log(time) over log(batch size) (below 1 is sublinear). Each growth step is
checked: the hierarchy stays healthy (``ClusterStage.health``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

from bench_support import SHARED, bench_settings, local_neo4j

from engramdb.ingestion.loaders import load_path
from engramdb.ingestion.stages.base import StageChunk, StageContext, StageReport
from engramdb.ingestion.stages.clusters import ClusterStage, health_problems
from engramdb.platform.interfaces.memory import Memory

NAMESPACE = "bench-clusters"


def stage_for(memory: Memory) -> ClusterStage:
    return ClusterStage(StageContext(memory.graph, memory.vectors, memory.embedder))


def shape(stage: ClusterStage) -> dict[int, int]:
    return {row["level"]: row["clusters"] for row in stage.level_counts()}


def check_health(stage: ClusterStage, expected_chunks: int, when: str) -> dict[str, int]:
    health = stage.health()
    bad = health_problems(health)
    if bad or health["chunks"] != expected_chunks:
        raise SystemExit(f"unhealthy hierarchy {when}: {health} (expected {expected_chunks} chunks)")
    return health


def timed_run(stage: ClusterStage, chunks: Sequence[StageChunk]) -> tuple[float, StageReport]:
    t0 = time.perf_counter()
    report = stage.run(chunks)
    return time.perf_counter() - t0, report


def rebuild(stage: ClusterStage, chunks: Sequence[StageChunk]) -> dict:
    """Clear the hierarchy and build it again over ``chunks`` in one growth step (clearing is timed too)."""
    t0 = time.perf_counter()
    stage.clear()
    cleared = time.perf_counter() - t0
    seconds, report = timed_run(stage, chunks)
    check_health(stage, len(chunks), "after a rebuild")
    return {"seconds": round(cleared + seconds, 2), "clear_seconds": round(cleared, 2), "chunks": len(chunks),
            "shape": shape(stage), **report.written}  # fmt: skip


def windows(chunks: Sequence[StageChunk], size: int, repeats: int) -> list[list[StageChunk]]:
    """``repeats`` batches of ``size`` chunks spread over ``chunks`` (they overlap when there are few)."""
    if size > len(chunks):
        raise SystemExit(f"batch of {size} asked, only {len(chunks)} MuSiQue chunks in memory")
    step = (len(chunks) - size) // max(repeats - 1, 1)
    return [list(chunks[i * step : i * step + size]) for i in range(repeats)]


def growth(
    settings, namespace: str, sizes: list[int], repeats: int, rebuilds: int, limit: int | None
) -> dict:
    wiki = load_path(SHARED / "data" / "2wiki" / "corpus.json")[:limit]
    musique = load_path(SHARED / "data" / "musique" / "corpus.json")
    results: dict = {"sizes": sizes, "repeats": repeats}
    with Memory(namespace, settings) as memory:
        t0 = time.perf_counter()
        memory.ingest(wiki)
        # Enough MuSiQue passages for the biggest batch in a few windows (a passage is about one chunk).
        memory.ingest(musique[: min(len(musique), max(sizes) * 5 // 4)])
        results["ingest_seconds"] = round(time.perf_counter() - t0, 1)
        stage = stage_for(memory)
        wiki_ids = {d.id for d in wiki}
        chunks = stage.indexable_chunks()
        base = [c for c in chunks if c.doc_id in wiki_ids]
        extra = [c for c in chunks if c.doc_id not in wiki_ids]
        results["memory"] = {"2wiki_chunks": len(base), "musique_chunks_waiting": len(extra)}
        print(
            f"memory: {len(base)} 2Wiki chunks, {len(extra)} MuSiQue chunks to draw batches from", flush=True
        )

        results["rebuilds"] = []
        for _ in range(rebuilds):
            row = rebuild(stage, base)
            results["rebuilds"].append(row)
            print(
                f"rebuild over {row['chunks']} chunks: {row['seconds']} s, shape {row['shape']}", flush=True
            )
        base_shape = shape(stage)

        results["batches"] = {}
        for size in sizes:
            rows = []
            for batch in windows(extra, size, repeats):
                add_seconds, added = timed_run(stage, batch)
                health = check_health(stage, len(base) + size, f"after adding {size} chunks")
                grown = shape(stage)
                t0 = time.perf_counter()
                removed = stage.remove_chunks([c.id for c in batch])
                remove_seconds = time.perf_counter() - t0
                check_health(stage, len(base), f"after removing {size} chunks")
                w = added.written
                rows.append({
                    "add_seconds": round(add_seconds, 3), "remove_seconds": round(remove_seconds, 3),
                    "levels_touched": w.get("levels_touched", 0), "summaries": w.get("summaries", 0),
                    "clusters_written": w.get("clusters_written", 0), "links": w.get("links", 0),
                    "replicas": w.get("replicas", 0), "lpa_rounds": w.get("lpa_rounds", 0),
                    "overlapping_chunks": health["overlapping_chunks"], "shape": grown,
                    "remove_summaries": removed.written.get("summaries", 0),
                })  # fmt: skip
                print(f"+{size} chunks: {add_seconds:.2f} s ({w.get('summaries', 0)} clusters re-summarised, "
                      f"{w.get('clusters_written', 0)} written, levels {w.get('levels_touched', 0)}), "
                      f"removed again in {remove_seconds:.2f} s; shape {grown}", flush=True)  # fmt: skip
            results["batches"][size] = {
                "median_add_seconds": round(statistics.median(r["add_seconds"] for r in rows), 3),
                "median_remove_seconds": round(statistics.median(r["remove_seconds"] for r in rows), 3),
                "median_summaries": statistics.median(r["summaries"] for r in rows),
                "runs": rows,
            }
        results["shape_after_growth"] = shape(stage)
        results["base_shape"] = base_shape

        biggest = windows(extra, max(sizes), 1)[0]
        row = rebuild(stage, base + biggest)
        results["rebuild_with_biggest_batch"] = row
        print(f"rebuild over {row['chunks']} chunks: {row['seconds']} s, shape {row['shape']}", flush=True)
        stage.clear()  # the namespace is left without a hierarchy: the next run starts from the same state

    rebuild_seconds = statistics.median(r["seconds"] for r in results["rebuilds"])
    medians = [results["batches"][s]["median_add_seconds"] for s in sizes]
    results["rebuild_median_seconds"] = rebuild_seconds
    results["rebuild_over_batch"] = {
        s: round(rebuild_seconds / m, 1) for s, m in zip(sizes, medians, strict=True)
    }
    results["growth_exponent"] = exponent(sizes, medians)
    return results


def exponent(sizes: list[int], times: list[float]) -> float | None:
    """Slope of log(time) over log(batch size): below 1 means sublinear growth."""
    if len(sizes) < 2 or min(times) <= 0:
        return None
    xs, ys = [math.log(s) for s in sizes], [math.log(t) for t in times]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return round(
        sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs), 3
    )


def table(results: dict) -> str:
    lines = [
        "| batch (chunks) | median integrate s | median remove s | median re-summarised | rebuild / integrate |",
        "|---|---|---|---|---|",
    ]
    for size, row in results["batches"].items():
        lines.append(f"| {size} | {row['median_add_seconds']} | {row['median_remove_seconds']} | "
                     f"{row['median_summaries']} | {results['rebuild_over_batch'][size]}x |")  # fmt: skip
    lines.append(
        f"| rebuild, {results['memory']['2wiki_chunks']} chunks | {results['rebuild_median_seconds']} | | | |"
    )
    big = results["rebuild_with_biggest_batch"]
    lines.append(f"| rebuild, {big['chunks']} chunks | {big['seconds']} | | | |")
    if results["growth_exponent"] is not None:  # needs two batch sizes or more
        lines.append(f"\ntime ~ size^{results['growth_exponent']} (below 1: sublinear)")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 200, 800])
    parser.add_argument(
        "--repeats", type=int, default=3, help="Batches integrated per size (median reported)."
    )
    parser.add_argument("--rebuilds", type=int, default=1, help="Rebuilds from scratch (median reported).")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--namespace", default=NAMESPACE)
    parser.add_argument("--base-limit", type=int, help="Only the first N 2Wiki passages (a quick trial).")
    args = parser.parse_args()
    if min(args.sizes) < 1 or args.repeats < 1 or args.rebuilds < 1:
        parser.error("sizes, --repeats and --rebuilds must be positive")
    # Ingest writes the GSW only: the stage runs are what is timed.
    os.environ.setdefault("ENGRAMDB_STAGES", "[]")
    settings = bench_settings()
    with local_neo4j(settings):
        results = growth(
            settings, args.namespace, sorted(args.sizes), args.repeats, args.rebuilds, args.base_limit
        )
    print(table(results))
    if args.out:
        args.out.write_text(json.dumps(results, indent=2, default=str))


if __name__ == "__main__":
    main()

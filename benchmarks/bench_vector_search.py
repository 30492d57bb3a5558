"""Benchmark the embedded vector store: bulk insert, HNSW build, filtered top-k search.

Builds an :class:`EdgeVectorStore` in a temporary directory, inserts random unit
vectors spread round-robin over several namespaces, builds the HNSW index, then
times top-k searches filtered by namespace (the only kind engramdb runs) and
checks them against exact brute force in numpy, so a fast-but-wrong index
cannot pass unnoticed.

    python benchmarks/bench_vector_search.py [--points 200000] [--dim 384] [--queries 200]
        [--namespaces 4] [--out FILE] [--data uniform|clustered] [--ef-sweep 64,256,1024]

``--data uniform`` (default) draws points uniformly on the sphere: no structure
at all, the hardest case for any graph index. ``--data clustered`` draws them
around random centres, closer to how text embeddings behave.

Vectors are generated chunk by chunk from per-chunk seeds and regenerated for
the brute-force pass, so the benchmark itself never holds the whole matrix.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from engramdb.platform.vectors import DEFAULT_HNSW_EF, MAX_SEGMENT_KB, EdgeVectorStore, VectorPoint

COLLECTION = "bench"
CHUNK = 20_000  # points generated (and upserted, split by namespace) at a time
N_CENTRES = 2_000
WARMUP_QUERIES = 10


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


class Data:
    """Deterministic, chunked random unit vectors (uniform or clustered)."""

    def __init__(self, points: int, dim: int, namespaces: int, kind: str, seed: int) -> None:
        self.points, self.dim, self.namespaces, self.kind, self.seed = points, dim, namespaces, kind, seed
        self.centres = _unit(np.random.default_rng([seed, 1]).standard_normal((N_CENTRES, dim)))

    def _sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        noise = rng.standard_normal((n, self.dim), dtype=np.float32)
        if self.kind == "uniform":
            return _unit(noise)
        centres = self.centres[rng.integers(0, N_CENTRES, n)]
        return _unit(centres + noise * (1.2 / np.sqrt(self.dim)))  # cos(point, centre) ~ 0.64

    def chunks(self) -> Iterator[tuple[int, np.ndarray]]:
        """(first index, vectors) for consecutive chunks; identical on every call."""
        for start in range(0, self.points, CHUNK):
            n = min(CHUNK, self.points - start)
            yield start, self._sample(np.random.default_rng([self.seed, 2, start]), n)

    def queries(self, n: int) -> np.ndarray:
        return self._sample(np.random.default_rng([self.seed, 3]), n)

    def namespace_of(self, index: np.ndarray | int) -> np.ndarray | int:
        return index % self.namespaces


def insert(store: EdgeVectorStore, data: Data) -> float:
    started = time.perf_counter()
    for start, vectors in data.chunks():
        by_ns: dict[int, list[VectorPoint]] = {}
        for offset, vec in enumerate(vectors):
            i = start + offset
            by_ns.setdefault(i % data.namespaces, []).append(
                VectorPoint(key=f"p{i}", vector=vec, payload={"doc_id": f"doc{i // 100}"})
            )
        for ns, points in by_ns.items():
            store.upsert(COLLECTION, f"ns{ns}", points)
    return time.perf_counter() - started


def exact_top_k(data: Data, queries: np.ndarray, k: int) -> list[set[str]]:
    """Brute-force top-k keys per query within the query's namespace (streams over chunks)."""
    q_ns = np.arange(len(queries)) % data.namespaces
    best_scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
    best_ids = np.full((len(queries), k), -1, dtype=np.int64)
    for start, vectors in data.chunks():
        ids = np.arange(start, start + len(vectors))
        scores = queries @ vectors.T  # (q, chunk)
        scores[q_ns[:, None] != data.namespace_of(ids)[None, :]] = -np.inf
        all_scores = np.concatenate([best_scores, scores], axis=1)
        all_ids = np.concatenate([best_ids, np.broadcast_to(ids, scores.shape)], axis=1)
        top = np.argpartition(-all_scores, k - 1, axis=1)[:, :k]
        best_scores = np.take_along_axis(all_scores, top, axis=1)
        best_ids = np.take_along_axis(all_ids, top, axis=1)
    return [{f"p{i}" for i in row if i >= 0} for row in best_ids]


def run_queries(
    store: EdgeVectorStore, data: Data, queries: np.ndarray, k: int, truth: list[set[str]]
) -> dict[str, float]:
    for qi in range(min(WARMUP_QUERIES, len(queries))):  # page in the index; not timed
        store.search(COLLECTION, f"ns{qi % data.namespaces}", queries[qi], k)
    latencies, recalls, leaks = [], [], 0
    for qi, query in enumerate(queries):
        ns = f"ns{qi % data.namespaces}"
        t0 = time.perf_counter()
        hits = store.search(COLLECTION, ns, query, k)
        latencies.append((time.perf_counter() - t0) * 1000)
        leaks += sum(h.payload["namespace"] != ns for h in hits)
        if qi < len(truth):
            recalls.append(len(truth[qi] & {h.key for h in hits}) / k)
    lat = np.asarray(latencies)
    return {
        "p50_ms": float(np.percentile(lat, 50)),
        "p95_ms": float(np.percentile(lat, 95)),
        "mean_ms": float(lat.mean()),
        "recall_at_k": float(np.mean(recalls)),
        "namespace_leaks": leaks,
    }


def _rss_breakdown() -> dict[str, float]:
    """Resident memory split into heap (anonymous) and mmapped-file pages, on Linux.

    Qdrant keeps vectors and graphs in mmapped files: those pages count in RSS
    but are page cache the kernel can drop, unlike the heap.
    """
    try:
        lines = Path("/proc/self/status").read_text().splitlines()
    except OSError:
        return {}
    fields = {
        line.split(":")[0]: line.split()[1] for line in lines if line.startswith(("RssAnon", "RssFile"))
    }
    return {"anon": int(fields.get("RssAnon", 0)) / 1024, "file": int(fields.get("RssFile", 0)) / 1024}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", type=int, default=200_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--namespaces", type=int, default=4)
    parser.add_argument("--top-k", type=int, default=20)
    parser.add_argument("--recall-queries", type=int, default=50, help="queries checked against brute force")
    parser.add_argument("--data", choices=["uniform", "clustered"], default="uniform")
    parser.add_argument("--ef", type=int, default=DEFAULT_HNSW_EF, help="search-time HNSW ef")
    parser.add_argument(
        "--ef-sweep", default="64,512,2048", help="extra comma-separated ef values ('' for none)"
    )
    parser.add_argument(
        "--auto-optimize",
        action="store_true",
        help="index during insert, as upserts normally do (default: bulk insert, then build once)",
    )
    parser.add_argument(
        "--no-quantization",
        dest="quantized",
        action="store_false",
        help="float32 vectors only (the store's layout before int8 copies built and searched the graph)",
    )
    parser.add_argument(
        "--max-segment-kb",
        type=int,
        default=MAX_SEGMENT_KB,
        help="largest segment the optimizers build, KB of vectors (0: unbounded, the store before issue 28)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--dir", type=Path, default=None, help="store directory (default: a temp dir, removed)"
    )
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    args = parser.parse_args(argv)

    data = Data(args.points, args.dim, args.namespaces, args.data, args.seed)
    workdir = args.dir or Path(tempfile.mkdtemp(prefix="engramdb-bench-"))
    result: dict = {"config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}}
    total_started = time.perf_counter()
    try:
        store = EdgeVectorStore(
            workdir / "qdrant", hnsw_ef=args.ef, auto_optimize=args.auto_optimize, quantized=args.quantized,
            max_segment_kb=args.max_segment_kb or None,
        )  # fmt: skip
        store.ensure_collection(COLLECTION, args.dim)
        print(
            f"inserting {args.points:,} x {args.dim}-d {args.data} points into {args.namespaces} namespaces ..."
        )
        insert_s = insert(store, data)
        after_insert = store.stats(COLLECTION)
        print(f"  {insert_s:.1f} s, {args.points / insert_s:,.0f} points/s  {after_insert}")

        print("building the HNSW index (optimize) ...")
        t0 = time.perf_counter()
        store.optimize(COLLECTION)
        build_s = time.perf_counter() - t0
        stats = store.stats(COLLECTION)
        print(f"  {build_s:.1f} s  {stats}")
        if stats["points"] != args.points:
            raise SystemExit(f"expected {args.points} points in the store, found {stats['points']}")

        queries = data.queries(args.queries)
        n_truth = min(args.recall_queries, args.queries)
        t0 = time.perf_counter()
        truth = exact_top_k(data, queries[:n_truth], args.top_k)
        brute_s = time.perf_counter() - t0

        runs = {}
        for ef in dict.fromkeys([args.ef, *(int(x) for x in args.ef_sweep.split(",") if x.strip())]):
            store.hnsw_ef = ef
            runs[ef] = run_queries(store, data, queries, args.top_k, truth)
        store.close()
        total_s = time.perf_counter() - total_started

        main_run = runs[args.ef]
        result.update(
            insert_seconds=insert_s,
            insert_points_per_second=args.points / insert_s,
            index_build_seconds=build_s,
            store_stats=stats,
            search={"ef": args.ef, "top_k": args.top_k, "queries": args.queries, **main_run},
            ef_sweep={str(ef): r for ef, r in runs.items()},
            brute_force_seconds_for_recall=brute_s,
            recall_queries=n_truth,
            peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            rss_end_mb=_rss_breakdown(),
            total_seconds=total_s,
        )
    finally:
        if args.dir is None:
            shutil.rmtree(workdir, ignore_errors=True)

    print()
    print(f"points           {args.points:,} x {args.dim}-d ({args.data}), {args.namespaces} namespaces")
    print(
        f"insert           {result['insert_seconds']:.1f} s  ({result['insert_points_per_second']:,.0f} points/s)"
    )
    print(f"index build      {result['index_build_seconds']:.1f} s  "
          f"(indexed vectors {stats['indexed_vectors']:,}, segments {stats['segments']})")  # fmt: skip
    print(f"search top-{args.top_k}    ef={args.ef}: p50 {main_run['p50_ms']:.2f} ms, p95 {main_run['p95_ms']:.2f} ms "
          f"over {args.queries} namespace-filtered queries")  # fmt: skip
    print(
        f"recall@{args.top_k}        {main_run['recall_at_k']:.3f} vs numpy brute force ({n_truth} queries)"
    )
    print(f"namespace leaks  {main_run['namespace_leaks']}")
    if len(runs) > 1:
        print("ef sweep:")
        for ef, r in runs.items():
            print(
                f"  ef={ef:<5} p50 {r['p50_ms']:6.2f} ms  p95 {r['p95_ms']:6.2f} ms  recall {r['recall_at_k']:.3f}"
            )
    rss_end = result["rss_end_mb"]
    split = (
        f" (at the end: {rss_end['anon']:.0f} MB heap, {rss_end['file']:.0f} MB mmapped files)"
        if rss_end
        else ""
    )
    print(f"peak RSS         {result['peak_rss_mb']:.0f} MB{split}")
    print(f"total            {result['total_seconds']:.1f} s")
    if args.out:
        args.out.write_text(json.dumps(result, indent=2))
        print(f"wrote {args.out}")
    return result


if __name__ == "__main__":
    main(sys.argv[1:])

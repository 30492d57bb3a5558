"""Offline ingest throughput, and batched Cypher vs object-by-object neomodel writes.

    python benchmarks/bench_ingest.py [--corpus PATH] [--limit N] [--ratio-docs 100] [--out FILE]
    python benchmarks/bench_ingest.py --travel 1000 [--out FILE]

``--travel N`` measures the target of issue 28 in a form that travels between
machines, in one process: our embedder embedding the first N passages alone,
then a default ingest (every default stage) of the same N passages into a fresh
namespace, and their ratio; with the peak RSS through the ingest, every text the
embedder was given per passage (and how many were repeats of a text already
embedded), and where the time went (embedding, vector writes and graph writes by
caller), and the CPU Neo4j's JVM spent meanwhile by thread group (its JIT compilers, the workers
running the queries, the garbage collector), and the floor those CPU seconds set: the wall time
the same work would take with every core busy throughout, which no better overlap can go under.
Run it in a fresh data home (``ENGRAMDB_HOME=$(mktemp -d)``) to compare
runs: the index build at the end of an ingest grows with the points earlier runs
left in the home.

Part 1 ingests a corpus (default: the 6,119 2Wiki passages) into a fresh
namespace with the offline extractor and embedder and reports passages/s,
QA edges/s, stage times and peak memory of this process (Neo4j runs in its
own JVM; its heap and page cache are fixed by settings), the CPU of both and the floor it sets. Part 2 writes the
same extracted GSWs twice into fresh namespaces: once with the batched UNWIND
writers (one transaction per batch), once node by node and edge by edge with
neomodel, and reports the ratio (target ≥ 20×).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import uuid
from pathlib import Path

from bench_support import (
    SHARED,
    CpuMeter,
    RssSplit,
    StageGrowth,
    bench_settings,
    cpu_floor,
    describe_growth,
    describe_rss_split,
    jvm_cpu_delta,
    jvm_cpu_seconds,
    local_neo4j,
    peak_rss_mb,
)

from engramdb.ingestion.extraction.extractors import ChunkJob, OfflineGSWExtractor
from engramdb.ingestion.extraction.offline import ChunkText
from engramdb.ingestion.loaders import load_path
from engramdb.ingestion.reconcile import EntityResolver
from engramdb.ingestion.stages.clusters import CLUSTER_COLLECTION
from engramdb.ingestion.stages.gists import FACT_COLLECTION, GIST_COLLECTION
from engramdb.ingestion.writer import BatchRows, ChunkResult, build_rows, write_rows
from engramdb.platform.embedders import make_embedder
from engramdb.platform.interfaces.memory import Memory
from engramdb.platform.neo4j_server import LocalNeo4j
from engramdb.platform.storage import QA_COLLECTION, passage_text


def ingest_throughput(settings, corpus: Path, limit: int | None) -> dict:
    docs = load_path(corpus)[:limit] if limit else load_path(corpus)
    namespace = f"bench-ingest-{uuid.uuid4().hex[:8]}"
    with Memory(namespace, settings) as memory:
        memory.ingestor  # noqa: B018 - load models before timing
        memory.embedder.embed_documents(["warm up"])
        done = 0
        started = time.perf_counter()

        def progress(n: int) -> None:
            nonlocal done
            done += n
            if done % 640 < n:
                rate = done / (time.perf_counter() - started)
                print(f"  {done}/{len(docs)} passages, {rate:.1f}/s", file=sys.stderr)

        with RssSplit() as split, CpuMeter(settings) as meter, StageGrowth(memory.ingestor.stages) as growth:
            report = memory.ingest(docs, progress=progress)
        stats = memory.stats()
    return {
        "corpus": str(corpus), "namespace": namespace, "passages": len(docs), "seconds": report.seconds,
        "passages_per_s": len(docs) / report.seconds, "qa_edges": report.qa_edges,
        "qa_edges_per_s": report.qa_edges / report.seconds, "qa_pairs": report.qa_pairs,
        "entities": stats["entities"], "stage_seconds": report.stage_seconds,
        "peak_rss_mb_python": peak_rss_mb(), "rss_split_mb": split.result(),
        "stage_seconds_per_part_by_quarter": growth.by_quarter(), **meter.result(),
    }  # fmt: skip


class CountingEmbedder:
    """The configured embedder, counting what it is given: texts, repeats of a text it was
    already given in this run, and seconds, by the function that asked."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        self.seen: set[str] = set()
        self.by_caller: dict[str, dict[str, float]] = {}

    def _count(self, texts, seconds: float) -> None:
        caller = sys._getframe(2).f_code.co_name
        row = self.by_caller.setdefault(
            caller, {"calls": 0, "texts": 0, "tokens": 0, "repeats": 0, "seconds": 0.0}
        )
        row["calls"] += 1
        row["texts"] += len(texts)
        row["tokens"] += sum(self.inner.count_tokens(texts)) if hasattr(self.inner, "count_tokens") else 0
        row["repeats"] += sum(1 for t in texts if t in self.seen)
        row["seconds"] += seconds
        self.seen.update(texts)

    def embed_documents(self, texts):
        started = time.perf_counter()
        out = self.inner.embed_documents(texts)
        self._count(list(texts), time.perf_counter() - started)
        return out

    def embed_query(self, text):
        return self.inner.embed_query(text)

    def embed_queries(self, texts):
        return self.inner.embed_queries(texts)

    def count_tokens(self, texts):
        return self.inner.count_tokens(texts)

    def totals(self) -> dict[str, float]:
        rows = self.by_caller.values()
        return {k: sum(r[k] for r in rows) for k in ("texts", "tokens", "repeats", "seconds")}


def _timed_method(obj, name: str, tally: dict[str, float], key) -> None:
    """Wrap ``obj.name`` so its seconds add up in ``tally[key(args)]`` (instrumentation only)."""
    inner = getattr(obj, name)

    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            k = key(args)
            tally[k] = tally.get(k, 0.0) + time.perf_counter() - started

    setattr(obj, name, wrapper)


def snapshot_memory(memory: Memory) -> dict:
    """Bytes the diffusion strategy's walk snapshot of this memory holds (Python objects and
    arrays, measured by tracemalloc while it is built), for docs/scaling.md."""
    import tracemalloc

    from engramdb.retrieval.diffusion.strategy import SnapshotCache

    tracemalloc.start()
    snapshot, _ = SnapshotCache().current(memory.graph, memory.vectors, memory.embedder.dim)
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    chunks = len(snapshot.chunk_ids)
    return {"bytes": held, "chunks": chunks, "entities": snapshot.entities, "edges": snapshot.edges,
            "bytes_per_passage": held / max(chunks, 1), "build_seconds": snapshot.build_seconds}  # fmt: skip


def _points_held(vectors) -> int:
    """QA points the store already holds, every namespace (0 where the store cannot tell)."""
    stats = getattr(vectors, "stats", None)
    return int(stats(QA_COLLECTION)["points"]) if stats is not None else 0


def travel(settings, corpus: Path, n: int) -> dict:
    """Embedding N passages alone vs a default ingest of them, in this one process."""
    docs = load_path(corpus)[:n]
    if len(docs) < n:
        raise SystemExit(f"{corpus} has {len(docs)} passages, fewer than --travel {n}")
    texts = [passage_text(d.title, d.text) for d in docs]

    def embed_alone_seconds() -> float:
        alone = make_embedder(settings)  # a fresh one each time: nothing remembered from a run before
        alone.embed_documents(["warm up"])
        started, cpu = time.perf_counter(), time.process_time()
        alone.embed_documents(texts)
        return time.perf_counter() - started, time.process_time() - cpu

    alone_first, alone_first_cpu = embed_alone_seconds()
    rss_before = peak_rss_mb()
    fresh = make_embedder(settings)  # nothing the baseline embedded may be reused by the ingest
    fresh.embed_documents(["warm up"])
    alone_tokens = sum(fresh.count_tokens(texts)) if hasattr(fresh, "count_tokens") else 0
    run_before = getattr(fresh, "texts_embedded", None)
    tokens_before = getattr(fresh, "tokens_embedded", None)
    counting = CountingEmbedder(fresh)
    namespace = f"bench-travel-{uuid.uuid4().hex[:8]}"
    with Memory(namespace, settings, embedder=counting) as memory:
        memory.ingestor  # noqa: B018 - open the stores and stages before timing
        held = _points_held(memory.vectors)
        if held:  # the end-of-ingest HNSW build grows with them: RSS rose run after run in one home
            print(f"note: this data home already holds {held:,} QA points of earlier runs; peak RSS and the "
                  "final index build depend on them: run in a fresh ENGRAMDB_HOME to compare runs", file=sys.stderr)  # fmt: skip
        upserts: dict[str, float] = {}
        _timed_method(memory.vectors, "upsert", upserts, lambda a: a[0])
        jvm_pid = LocalNeo4j(settings).pid() if settings.uses_local_neo4j else None
        jvm_before = jvm_cpu_seconds(jvm_pid)
        started, cpu = time.perf_counter(), time.process_time()
        with RssSplit() as split:
            report = memory.ingest(docs)
        ingest_s, ingest_cpu = time.perf_counter() - started, time.process_time() - cpu
        jvm = jvm_cpu_delta(jvm_before, jvm_cpu_seconds(jvm_pid))
        # read now: the baseline below loads a second model beside the open memory, and what that
        # holds is not the ingest's
        rss_ingest = peak_rss_mb()
        # the machine's speed may drift: the baseline runs before and after the ingest
        alone_last, alone_last_cpu = embed_alone_seconds()
        snapshot = snapshot_memory(memory)
        stats = memory.stats()
        for collection in (FACT_COLLECTION, GIST_COLLECTION, CLUSTER_COLLECTION):
            memory.vectors.ensure_collection(collection, counting.dim)
            stats[f"{collection}_vectors"] = memory.vectors.count(collection, namespace)
    totals = counting.totals()
    embed_alone = (alone_first + alone_last) / 2
    alone_cpu = (alone_first_cpu + alone_last_cpu) / 2
    # texts the model itself ran (an embedder that reuses vectors runs fewer than it is given)
    # an embedder without these counters runs every text it is given
    model_texts = fresh.texts_embedded - run_before if run_before is not None else totals["texts"]
    model_tokens = fresh.tokens_embedded - tokens_before if tokens_before is not None else totals["tokens"]
    return {
        "corpus": str(corpus), "namespace": namespace, "passages": n,
        "embed_alone_seconds": embed_alone, "embed_alone_runs": [alone_first, alone_last], "ingest_seconds": ingest_s, "ratio": ingest_s / embed_alone,
        "ingest_cpu_seconds": ingest_cpu, "embed_alone_cpu_seconds": alone_cpu, "cpu_ratio": ingest_cpu / alone_cpu,
        "neo4j_jvm_cpu_seconds": jvm, "cpu_floor": cpu_floor(ingest_cpu, jvm, ingest_s),
        "diffusion_snapshot": snapshot,
        "peak_rss_mb_python": rss_ingest, "peak_rss_mb_before_ingest": rss_before,
        "peak_rss_mb_whole_run": peak_rss_mb(), "qa_points_held_before": held, "rss_split_mb": split.result(),
        "texts_embedded_per_passage": totals["texts"] / n, "repeats_per_passage": totals["repeats"] / n,
        "distinct_texts_per_passage": (totals["texts"] - totals["repeats"]) / n,
        "model_texts_per_passage": model_texts / n, "model_tokens": model_tokens,
        "embed_seconds_in_ingest": totals["seconds"], "tokens_embedded_alone": alone_tokens,
        "tokens_embedded_in_ingest": totals["tokens"], "embedding_by_caller": counting.by_caller,
        "vector_upsert_seconds": upserts, "stage_seconds": report.stage_seconds, "stats": stats,
    }  # fmt: skip


#: The whole 2Wiki corpus before issue 28's work (README's measured table, before the gists and
#: clusters stages were part of a default ingest), and issue 28's target for it with every stage.
BEFORE_FULL_2WIKI = {"when": "before the memory stages, README", "seconds": 527, "peak_rss_mb_python": 4400}
TARGET_FULL = {"seconds": 300, "peak_rss_mb_python": 1500}

#: ``--travel 1000`` at the commit before issue 28's work (39e03c7, every text embedded as given,
#: indexing after every upsert, ONNX threads spinning), same machine, load average 12-19:
#: printed beside a run of 1,000 passages.
BEFORE_TRAVEL_1000 = {
    "ratio": 9.1, "cpu_ratio": 7.9, "peak_rss_mb_python": 3324, "texts_per_passage": 31.3,
    "model_texts_per_passage": 31.3, "model_tokens_ratio": 5.3,
}  # fmt: skip


def print_travel(r: dict) -> None:
    if r["passages"] == 1000:
        b = BEFORE_TRAVEL_1000
        print(f"before (39e03c7, same benchmark): ingest/embedding alone {b['ratio']}x wall, {b['cpu_ratio']}x CPU; "
              f"peak RSS {b['peak_rss_mb_python']} MB; {b['texts_per_passage']} texts per passage given, "
              f"{b['model_texts_per_passage']} run; tokens run {b['model_tokens_ratio']}x the passages' own")  # fmt: skip
    print(f"travel: {r['passages']} passages: default ingest {r['ingest_seconds']:.1f} s vs embedding them alone "
          f"{r['embed_alone_seconds']:.1f} s (mean of {', '.join(f'{x:.1f}' for x in r['embed_alone_runs'])} "
          f"before and after it) = {r['ratio']:.1f}x; peak RSS (python) through the ingest "
          f"{r['peak_rss_mb_python']:.0f} MB ({r['peak_rss_mb_before_ingest']:.0f} MB before it, "
          f"{r.get('peak_rss_mb_whole_run', float('nan')):.0f} MB with the baseline run after it); "
          f"{describe_rss_split(r.get('rss_split_mb', {}))}")  # fmt: skip
    print(f"  CPU of this process (Neo4j's JVM not included): ingest {r['ingest_cpu_seconds']:.1f} s vs embedding "
          f"alone {r['embed_alone_cpu_seconds']:.1f} s = {r['cpu_ratio']:.1f}x; "
          f"tokens run through the model {r['model_tokens'] / r['tokens_embedded_alone']:.1f}x the passages' own")  # fmt: skip
    if jvm := r.get("neo4j_jvm_cpu_seconds"):
        print(f"  CPU of Neo4j's JVM through the ingest: {jvm['total']:.1f} s ("
              + ", ".join(f"{k} {v:.1f}" for k, v in jvm.items() if k != "total") + ")")  # fmt: skip
        f = r["cpu_floor"]
        print(f"  floor: the ingest used {f['core_seconds']:.1f} core-seconds (this process and the JVM), "
              f"{f['busy']:.0%} of its {f['cores']} cores' time; with every core busy throughout it would "
              f"still take {f['seconds']:.1f} s = {f['seconds'] / r['embed_alone_seconds']:.1f}x the embedding "
              f"alone (target 5x); the tokens run alone would take {r['model_tokens'] / r['tokens_embedded_alone']:.1f}x "
              "at the baseline's speed")  # fmt: skip
    d = r["diffusion_snapshot"]
    print(f"  diffusion walk snapshot of this memory: {d['bytes'] / 1e6:.1f} MB for {d['chunks']} passages "
          f"({d['bytes_per_passage']:,.0f} B per passage, {d['edges']} walk edges, {d['entities']} entities), "
          f"built in {d['build_seconds']:.1f} s")  # fmt: skip
    print(f"  texts given to the embedder per passage {r['texts_embedded_per_passage']:.1f} "
          f"({r['distinct_texts_per_passage']:.1f} distinct, {r['repeats_per_passage']:.1f} repeats), "
          f"run through the model {r['model_texts_per_passage']:.1f}, "
          f"embedding {r['embed_seconds_in_ingest']:.1f} s of the ingest; tokens: given {r['tokens_embedded_in_ingest']:,}, "
          f"run {r['model_tokens']:,}, the passages alone {r['tokens_embedded_alone']:,}")  # fmt: skip
    for caller, row in sorted(r["embedding_by_caller"].items(), key=lambda kv: -kv[1]["seconds"]):
        print(f"    {caller}: {row['texts']:.0f} texts ({row['repeats']:.0f} repeats, {row['tokens']:.0f} tokens) "
              f"in {row['calls']:.0f} calls, "
              f"{row['seconds']:.1f} s")  # fmt: skip
    print("  vector upserts (s): " + ", ".join(f"{k} {v:.1f}" for k, v in r["vector_upsert_seconds"].items()))
    print("  pipeline steps (s): " + ", ".join(f"{k} {v:.1f}" for k, v in r["stage_seconds"].items()))
    print("  stats: " + ", ".join(f"{k} {v}" for k, v in r["stats"].items() if k != "namespace"))


def _rows_for(docs, settings, namespace: str) -> BatchRows:
    extractor = OfflineGSWExtractor()
    jobs = [(doc, chunk) for doc in docs for chunk in doc.chunks()]
    extractions = extractor.extract_jobs([ChunkJob(ChunkText(c.text, d.title), d.id) for d, c in jobs])
    results = [ChunkResult(c, x.gsw, x.error) for (_, c), x in zip(jobs, extractions, strict=True)]
    return build_rows(docs, results, EntityResolver(lambda keys: {}))


def write_path_ratio(settings, corpus: Path, n_docs: int, repeat: int) -> dict:
    """Median over `repeat` runs, each into fresh namespaces, of both write paths."""
    docs = load_path(corpus)[:n_docs]
    rows = _rows_for(docs, settings, "x")
    runs = [_one_write_path_run(settings, rows) for _ in range(repeat)]
    batched = statistics.median(r[0] for r in runs)
    neomodel = statistics.median(r[1] for r in runs)
    return {
        "documents": len(docs), "qa_edges": len(rows.qa_edges), "entities": len(rows.entities), "runs": repeat,
        "batched_seconds": batched, "neomodel_seconds": neomodel, "ratio": neomodel / batched,
        "ratios_per_run": [n / b for b, n in runs],
    }  # fmt: skip


def _one_write_path_run(settings, rows: BatchRows) -> tuple[float, float]:
    from neomodel import db

    from engramdb.platform import models as m

    with Memory(f"bench-batched-{uuid.uuid4().hex[:8]}", settings) as batched:
        started = time.perf_counter()
        write_rows(batched.graph, rows)
        batched_s = time.perf_counter() - started
        db.set_connection(driver=batched.driver)
        ns = f"bench-neomodel-{uuid.uuid4().hex[:8]}"
        started = time.perf_counter()
        _write_with_neomodel(m, ns, rows)
        neomodel_s = time.perf_counter() - started
        counts = batched.graph.with_namespace(ns).read("traversals/namespace_counts")[0]
        batched_counts = batched.graph.read("traversals/namespace_counts")[0]
    assert counts == batched_counts, (counts, batched_counts)  # both paths built the same graph
    return batched_s, neomodel_s


def _write_with_neomodel(m, ns: str, rows: BatchRows) -> None:
    """The same graph, saved the ORM way: one round trip per node and edge, and the
    entity summaries (aliases, roles, states) computed in Python and saved per entity,
    so both paths end in the same graph."""
    docs = {r["id"]: m.Document(namespace=ns, uid=r["id"], title=r["title"], source=r["source"],
                                 content_hash=r["content_hash"], metadata_json=r["metadata_json"],
                                 status=r["status"]).save() for r in rows.documents}  # fmt: skip
    chunks = {}
    for r in rows.chunks:
        chunk = m.Chunk(namespace=ns, uid=r["id"], doc_id=r["doc_id"], title=r["title"], position=r["position"],
                        text=r["text"], content_hash=r["content_hash"], status=r["status"], error=r["error"]).save()  # fmt: skip
        docs[r["doc_id"]].chunks.connect(chunk, {})
        chunks[r["id"]] = chunk
    entities = {r["id"]: m.Entity(namespace=ns, uid=r["id"], name=r["name"], normalized_name=r["normalized_name"],
                                  type=r["type"]).save() for r in rows.entities}  # fmt: skip
    summary: dict[str, dict[str, list[str]]] = {}
    for r in rows.mentions:
        chunks[r["chunk_id"]].mentions.connect(entities[r["entity_id"]], {
            "namespace": ns, "doc_id": r["doc_id"], "surface": r["surface"], "type": r["type"],
            "aliases": r["aliases"], "alias_keys": r["alias_keys"], "roles": r["roles"], "states": r["states"]})  # fmt: skip
        acc = summary.setdefault(
            r["entity_id"], {"aliases": [], "alias_keys": [], "types": [], "roles": [], "states": []}
        )
        for field, values in (("aliases", [*r["aliases"], r["surface"]]), ("alias_keys", r["alias_keys"]),
                              ("types", [r["type"]]), ("roles", r["roles"]), ("states", r["states"])):  # fmt: skip
            acc[field] += [v for v in values if v not in acc[field]]
    for entity_id, acc in summary.items():
        e = entities[entity_id]
        e.aliases = [a for a in acc["aliases"] if a != e.name]
        e.alias_keys, e.types, e.roles, e.states = (
            acc["alias_keys"],
            acc["types"],
            acc["roles"],
            acc["states"],
        )
        e.aliases_text, e.roles_text = " ".join(e.aliases), " ".join(e.roles)
        e.states_text, e.mention_count = (
            " ".join(e.states),
            sum(1 for r in rows.mentions if r["entity_id"] == entity_id),
        )
        e.save()
    vps = {}
    for r in rows.verb_phrases:
        vp = m.VerbPhrase(
            namespace=ns, uid=r["id"], text=r["text"], doc_id=r["doc_id"], chunk_id=r["chunk_id"]
        ).save()
        chunks[r["chunk_id"]].verb_phrases.connect(vp, {})
        for eid in r["entity_ids"]:
            entities[eid].role_in.connect(vp, {"namespace": ns, "doc_id": r["doc_id"]})
        vps[r["id"]] = vp
    for r in rows.qa_edges:
        vps[r["verb_phrase_id"]].answers.connect(
            entities[r["answer_id"]],
            {"qa_id": r["id"], "key": r["key"], "namespace": ns, "question": r["question"], "doc_id": r["doc_id"],
             "chunk_id": r["chunk_id"], "question_entity_ids": r["question_entity_ids"]},
        )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path, default=SHARED / "data" / "2wiki" / "corpus.json")
    parser.add_argument("--limit", type=int, help="Only the first N passages.")
    parser.add_argument("--ratio-docs", type=int, default=100, help="Passages for the write-path comparison.")
    parser.add_argument(
        "--ratio-repeat", type=int, default=3, help="Runs of the write-path comparison (median)."
    )
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument(
        "--travel", type=int, metavar="N",
        help="Only the travelling target: embed N passages alone vs a default ingest of them.",
    )  # fmt: skip
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    settings = bench_settings()
    results: dict = {}
    with local_neo4j(settings):
        if args.travel:
            results["travel"] = travel(settings, args.corpus, args.travel)
            print_travel(results["travel"])
            if args.out:
                args.out.write_text(json.dumps(results, indent=2))
            return
        if not args.skip_throughput:
            results["ingest"] = ingest_throughput(settings, args.corpus, args.limit)
            r = results["ingest"]
            print(f"ingest: {r['passages']} passages in {r['seconds']:.1f} s = {r['passages_per_s']:.1f} passages/s, "
                  f"{r['qa_edges_per_s']:.0f} QA edges/s ({r['qa_edges']} edges), peak RSS (python) "
                  f"{r['peak_rss_mb_python']:.0f} MB ({describe_rss_split(r['rss_split_mb'])})")  # fmt: skip
            if r["passages"] == 6119:
                b = BEFORE_FULL_2WIKI
                print(f"  before ({b['when']}): {b['seconds']} s, peak RSS (python) {b['peak_rss_mb_python']} MB; "
                      f"target: {TARGET_FULL['seconds']} s, {TARGET_FULL['peak_rss_mb_python']} MB")  # fmt: skip
            print("  stages (s): " + ", ".join(f"{k} {v:.1f}" for k, v in r["stage_seconds"].items()))
            print(
                "  memory stages, s per part in each quarter of the ingest: "
                + describe_growth(r["stage_seconds_per_part_by_quarter"])
            )
            f = r["cpu_floor"]
            print(f"  CPU: this process {r['cpu_seconds']:.1f} s, Neo4j's JVM {r['neo4j_jvm_cpu_seconds'].get('total', 0):.1f} s; "
                  f"{f['busy']:.0%} of the {f['cores']} cores' time; with every core busy throughout the same work "
                  f"would still take {f['seconds']:.1f} s (target {TARGET_FULL['seconds']} s)")  # fmt: skip
        results["write_path"] = write_path_ratio(settings, args.corpus, args.ratio_docs, args.ratio_repeat)
        w = results["write_path"]
        print(f"write path: {w['documents']} passages, {w['qa_edges']} QA edges, median of {w['runs']} runs: "
              f"batched {w['batched_seconds']:.2f} s, neomodel {w['neomodel_seconds']:.2f} s, ratio {w['ratio']:.1f}x "
              f"(per run: {', '.join(f'{r:.1f}x' for r in w['ratios_per_run'])})")  # fmt: skip
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

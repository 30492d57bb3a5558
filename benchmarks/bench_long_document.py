"""One long, novel-like document ingested offline: wall time, peak memory, bounded transactions.

    python benchmarks/bench_long_document.py [--mb 5] [--chunks-per-part 128] [--keep] [--out FILE]

Generates a deterministic novel-like text of ``--mb`` megabytes (varied
sentences about invented people, places, institutions and books, in
paragraphs), ingests it as ONE document into a fresh namespace with the
offline extractor and embedder and the default memory stages (gists, clusters), as
``engramdb ingest`` would, and reports the wall time, the time per stage,
how many parts (write transactions) it took, what was stored, and the peak RSS
of this process (``ru_maxrss``, split into anonymous memory and mapped files at the
peak; Neo4j runs in its own JVM with a fixed heap), and the CPU of both with the floor it sets
(the wall time of the same work with every core busy throughout). It then deletes the document (also in parts) and
reports that time, unless ``--keep``. Before documents were written in bounded
parts, a 2 MB document failed after about four minutes with Neo4j's
``MemoryPoolOutOfMemoryError`` (``dbms.memory.transaction.total.max``).

Uses the benchmark home and ports of ``bench_support`` unless ENGRAMDB_HOME /
ENGRAMDB_NEO4J_BOLT_PORT / ENGRAMDB_NEO4J_HTTP_PORT are set.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import uuid
from pathlib import Path

from bench_support import (
    CpuMeter,
    RssSplit,
    StageGrowth,
    bench_settings,
    describe_growth,
    describe_rss_split,
    local_neo4j,
    peak_rss_mb,
)

from engramdb.ingestion.documents import make_document
from engramdb.ingestion.pipeline import Ingestor, PartProgress, slowest_first
from engramdb.platform.interfaces.memory import Memory

FIRST = ("Aldric Berenice Cassian Delphine Evander Fenella Gideon Honoria Ignatius Juliana Kestrel Leontyne "
         "Mortimer Nerissa Octavian Perpetua Quentin Rosamund Sylvester Theodora Ulric Valentina Wilhelmina "
         "Xavier Yolanda Zebedee Ambrose Clementine Desmond Eudora").split()  # fmt: skip
LAST = ("Ashdown Blackwood Carrow Dunmore Elsworth Fairleigh Greaves Holloway Ingram Jessop Kingsley Lockhart "
        "Marlowe Northcott Osgood Pemberton Quarrie Ravensworth Stanhope Thornbury Underhill Vance Whitlock "
        "Yardley Abernethy Bellamy Cresswell Drummond").split()  # fmt: skip
PLACES = ("Port Selwyn|Eastmarch|Harrowgate|Lindenfall|Mirecourt|Oakhollow|Ravensmoor|Saltcombe|Thistlebury|"
          "Wexford Bay|Aldermere|Brackenridge|Coldharbour|Dunstable Reach|Fernhollow|Greywater").split("|")  # fmt: skip
ORGS = ("the Selwyn Shipping Company|the Royal Academy of Eastmarch|the Harrowgate Observatory|the Guild of "
        "Lindenfall Weavers|the Mirecourt Gazette|the Oakhollow Rail Society|the Saltcombe Lifeboat Institution|"
        "the Aldermere Botanical Garden").split("|")  # fmt: skip
WORKS = ("The Winter Ledger|A Map of Quiet Rivers|The Lantern Keeper|Songs of the Salt Marsh|The Glass Orchard|"
         "Letters from Aldermere|The Cartographer's Daughter|A Season at Greywater").split("|")  # fmt: skip


def _sentence(rng: random.Random) -> str:
    who, other = (f"{rng.choice(FIRST)} {rng.choice(LAST)}" for _ in range(2))
    place, elsewhere = rng.choice(PLACES), rng.choice(PLACES)
    org, work, year = rng.choice(ORGS), rng.choice(WORKS), rng.randint(1780, 1920)
    return rng.choice([
        f"{who} was born in {place} in {year}.",
        f"{who} married {other} in {place} in {year}.",
        f"{who} wrote {work} while living in {place}.",
        f"In {year}, {who} joined {org}.",
        f"{who} moved from {place} to {elsewhere} after the winter of {year}.",
        f"{org[0].upper() + org[1:]} hired {who} as its director in {year}.",
        f"{who} and {other} travelled to {place} by coach.",
        f"{who} died in {place} in {year}.",
        f"The first edition of {work} was printed in {place} in {year}.",
        f"{who} taught {other} to read at a school in {place}.",
        f"Nobody in {place} had heard of {who} before {year}.",
        f"{who} inherited a house in {elsewhere} from {other}.",
    ])  # fmt: skip


def novel(n_chars: int, seed: int = 1867) -> str:
    """A deterministic novel-like text of about ``n_chars`` characters."""
    rng = random.Random(seed)
    paragraphs: list[str] = []
    size = 0
    while size < n_chars:
        paragraph = " ".join(_sentence(rng) for _ in range(rng.randint(3, 9)))
        paragraphs.append(paragraph)
        size += len(paragraph) + 2
    return "\n\n".join(paragraphs)


#: The same benchmark before issue 28's work (README's measured table; without the memory stages, other
#: jobs running, load 3-7), and the issue's targets.
BEFORE_5MB = {"seconds": 4905, "peak_rss_mb": 3600, "delete_seconds": 93}
TARGET_5MB = {"seconds": 360, "peak_rss_mb": 1500, "delete_seconds": 30}


def run(settings, megabytes: float, chunks_per_part: int, keep: bool) -> dict:
    text = novel(int(megabytes * 1_000_000))
    doc = make_document(text, title="A Chronicle of Eastmarch", id="chronicle")
    n_chunks = len(doc.chunks())
    namespace = f"bench-long-{uuid.uuid4().hex[:8]}"
    with Memory(namespace, settings) as memory:
        base = memory.ingestor  # load the models before timing
        memory.embedder.embed_documents(["warm up"])
        ingestor = Ingestor(
            memory.graph, memory.vectors, memory.embedder, base.extractor, chunks_per_part=chunks_per_part,
            entity_merge_threshold=base.entity_merge_threshold, stages=base.stages,
        )  # fmt: skip
        rss_before = peak_rss_mb()
        started = time.perf_counter()
        parts: list[PartProgress] = []

        def progress(part: PartProgress) -> None:
            parts.append(part)
            elapsed = time.perf_counter() - started
            print(f"  part {len(parts)}: {part.chunks_done}/{part.chunks_total} chunks, {elapsed:.0f} s, "
                  f"peak RSS {peak_rss_mb():.0f} MB", file=sys.stderr)  # fmt: skip

        with RssSplit() as split, CpuMeter(settings) as meter, StageGrowth(ingestor.stages) as growth:
            report = ingestor.ingest([doc], on_part=progress)
        seconds = time.perf_counter() - started
        rss_after = peak_rss_mb()
        stats = memory.stats()
        deleted_seconds = None
        delete_steps: dict[str, float] = {}
        if not keep:
            t0 = time.perf_counter()
            deleted = ingestor.delete("chronicle")
            deleted_seconds = time.perf_counter() - t0
            delete_steps = deleted.step_seconds if deleted else {}
    return {
        "megabytes": len(text.encode("utf-8")) / 1e6, "chunks": n_chunks, "chunks_per_part": chunks_per_part,
        "parts": len(parts), "namespace": namespace, "seconds": seconds, "chars_per_s": len(text) / seconds,
        "status": "done" if report.ingested == 1 else "failed", "stage_seconds": report.stage_seconds,
        "stage_seconds_per_part_by_quarter": growth.by_quarter(),
        "qa_pairs": stats["qa_pairs"], "qa_edges": stats["qa_edges"], "entities": stats["entities"],
        "verb_phrases": stats["verb_phrases"], "peak_rss_mb_before_ingest": rss_before,
        "peak_rss_mb": rss_after, "rss_split_mb": split.result(), "delete_seconds": deleted_seconds,
        "delete_step_seconds": delete_steps, **meter.result(),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=float, default=5.0, help="Size of the generated document in megabytes.")
    parser.add_argument("--chunks-per-part", type=int, default=128, help="Chunks per write transaction.")
    parser.add_argument(
        "--keep", action="store_true", help="Keep the namespace instead of deleting the document."
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    settings = bench_settings()
    with local_neo4j(settings):
        r = run(settings, args.mb, args.chunks_per_part, args.keep)
    print(f"long document: {r['megabytes']:.2f} MB, {r['chunks']} chunks in {r['parts']} parts of <= "
          f"{r['chunks_per_part']}: {r['status']} in {r['seconds']:.0f} s ({r['chars_per_s'] / 1000:.1f} KB/s); "
          f"{r['qa_pairs']} QA pairs, {r['entities']} entities; peak RSS (python) {r['peak_rss_mb']:.0f} MB "
          f"({r['peak_rss_mb_before_ingest']:.0f} MB before the ingest; {describe_rss_split(r['rss_split_mb'])})")  # fmt: skip
    print("  stages (s): " + ", ".join(f"{k} {v:.1f}" for k, v in r["stage_seconds"].items()))
    print(
        "  memory stages, s per part in each quarter of the ingest: "
        + describe_growth(r["stage_seconds_per_part_by_quarter"])
    )
    f = r["cpu_floor"]
    print(f"  CPU: this process {r['cpu_seconds']:.1f} s, Neo4j's JVM {r['neo4j_jvm_cpu_seconds'].get('total', 0):.1f} s; "
          f"{f['busy']:.0%} of the {f['cores']} cores' time; with every core busy throughout the same work would "
          f"still take {f['seconds']:.0f} s (target {TARGET_5MB['seconds']} s)")  # fmt: skip
    if r["delete_seconds"] is not None:
        print(f"  delete (in parts): {r['delete_seconds']:.1f} s ({slowest_first(r['delete_step_seconds'])})")
    b, t = BEFORE_5MB, TARGET_5MB
    print(f"  before (README, no memory stages, loaded machine): {b['seconds']} s, peak RSS {b['peak_rss_mb']} MB, "
          f"delete {b['delete_seconds']} s; target {t['seconds']} s, {t['peak_rss_mb']} MB, delete {t['delete_seconds']} s")  # fmt: skip
    if args.out:
        args.out.write_text(json.dumps(r, indent=2))


if __name__ == "__main__":
    main()

"""Shared set-up for benchmarks: their own data home and ports, a local Neo4j started
for the run (and stopped after it, if the run started it), and the shared data."""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from engramdb.platform.config import Settings
from engramdb.platform.neo4j_server import LocalNeo4j
from engramdb.retrieval.metrics import percentile  # noqa: F401 - re-exported for the benchmarks

REPO = Path(__file__).resolve().parent.parent
#: The shared folder with the benchmark data (data/musique, data/2wiki): ENGRAMDB_SHARED, else
#: beside the repository. An empty ENGRAMDB_SHARED counts as unset, as in tests/conftest.py.
SHARED = Path(os.environ.get("ENGRAMDB_SHARED") or REPO.parent / "shared").expanduser()


def bench_settings() -> Settings:
    """Settings for benchmark runs: <repo>/.bench-home and ports 27687/27474 unless overridden."""
    os.environ.setdefault("ENGRAMDB_HOME", str(REPO / ".bench-home"))
    os.environ.setdefault("ENGRAMDB_NEO4J_BOLT_PORT", "27687")
    os.environ.setdefault("ENGRAMDB_NEO4J_HTTP_PORT", "27474")
    os.environ.setdefault("ENGRAMDB_CONFIG", "none")
    os.environ.setdefault("ENGRAMDB_NEO4J_HEAP", "2g")
    os.environ.setdefault("ENGRAMDB_NEO4J_PAGECACHE", "1g")
    return Settings()


@contextmanager
def local_neo4j(settings: Settings) -> Iterator[LocalNeo4j]:
    server = LocalNeo4j(settings)
    started_here = server.pid() is None and settings.uses_local_neo4j
    if settings.uses_local_neo4j:
        server.start()
    try:
        yield server
    finally:
        if started_here:
            server.stop()


def forget_question_vectors(embedder: object) -> None:
    """Empty the embedder's caches of recent vectors, so the asks timed next embed their questions
    as a user's first ask would: a question asked before, in a warm-up or by another strategy, would
    otherwise be timed without its embedding. Through ``forget_recent`` where the embedder has it,
    else the cache attributes themselves, because benchmarks also time older commits' embedders.
    Emptying only the query cache, as this did before, timed nothing: the offline embedder found each
    question again among its recent texts, so a strategy timed after another got its question
    vectors for nothing (bm25 at budget 256: 7.7 ms that way, 13.2 ms timed first)."""
    forget = getattr(embedder, "forget_recent", None)
    if callable(forget):
        forget()
        return
    for name in ("_cache", "_documents"):
        cache = getattr(embedder, name, None)
        if cache is not None:
            cache.clear()


#: Neo4j's JVM threads by what they do, by the start of their names in /proc (Linux cuts names at
#: 15 characters): the JIT's compilers, the Bolt workers that run the queries, the garbage collector.
JVM_THREAD_GROUPS = (
    ("JIT compilers", ("C1 CompilerThre", "C2 CompilerThre")),
    ("query workers", ("neo4j.BoltWorke",)),
    ("garbage collector", ("GC Thread", "G1 ")),
)


def jvm_cpu_seconds(pid: int | None) -> dict[str, float]:
    """The CPU seconds a JVM has used: ``total`` (every thread, ended ones too) and per group of
    :data:`JVM_THREAD_GROUPS` (threads alive now); empty where /proc cannot tell (no pid, not Linux).
    Take it before and after a run and subtract: what threads that ended in between used (Lucene's
    merge threads, say) is in the total but in no group."""
    if pid is None:
        return {}
    tick = os.sysconf("SC_CLK_TCK")

    def cpu(stat: str) -> float:
        fields = stat[stat.rindex(")") + 2 :].split()
        return (int(fields[11]) + int(fields[12])) / tick  # utime + stime

    try:
        out = {"total": cpu(Path(f"/proc/{pid}/stat").read_text())}
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return {}
    for group, _ in JVM_THREAD_GROUPS:
        out[group] = 0.0
    for task in tasks:
        try:
            stat = (task / "stat").read_text()
        except OSError:  # ended meanwhile
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        for group, prefixes in JVM_THREAD_GROUPS:
            if name.startswith(prefixes):
                out[group] += cpu(stat)
                break
    return out


def jvm_cpu_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """What the JVM used between two :func:`jvm_cpu_seconds` readings; ``other`` is the rest of
    the total (threads in no group, and threads that ended)."""
    if not before or not after:
        return {}
    delta = {k: after[k] - before.get(k, 0.0) for k in after}
    delta["other"] = delta["total"] - sum(delta[g] for g, _ in JVM_THREAD_GROUPS)
    return delta


def cpu_floor(
    process_cpu: float, jvm: dict[str, float], wall: float, cores: int | None = None
) -> dict[str, float]:
    """The least wall time a run's work could take here: the CPU seconds it used (this process and
    Neo4j's JVM) spread over every core with none idle. A target under this floor cannot be met by
    overlapping or scheduling the same work better, only by doing less of it; ``busy`` is the share
    of the cores' time the run, ``wall`` seconds long, kept them working."""
    cores = cores or os.cpu_count() or 1
    used = process_cpu + jvm.get("total", 0.0)
    return {"cores": cores, "core_seconds": used, "seconds": used / cores, "busy": used / (cores * wall)}


class CpuMeter:
    """The CPU this process and the local Neo4j's JVM use over a ``with`` block, and the floor
    (:func:`cpu_floor`) it sets; ``result()`` after the block."""

    def __init__(self, settings: Settings) -> None:
        self.pid = LocalNeo4j(settings).pid() if settings.uses_local_neo4j else None

    def __enter__(self) -> CpuMeter:
        self.jvm_before = jvm_cpu_seconds(self.pid)
        self.cpu, self.started = time.process_time(), time.perf_counter()
        return self

    def __exit__(self, *_: object) -> None:
        self.wall = time.perf_counter() - self.started
        self.process = time.process_time() - self.cpu
        self.jvm = jvm_cpu_delta(self.jvm_before, jvm_cpu_seconds(self.pid))

    def result(self) -> dict:
        return {"cpu_seconds": self.process, "neo4j_jvm_cpu_seconds": self.jvm,
                "cpu_floor": cpu_floor(self.process, self.jvm, self.wall)}  # fmt: skip


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def peak_rss_mb() -> float:
    """This process's peak RSS so far (``ru_maxrss``), MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


#: The sidecar of :class:`RssSplit`: samples a process's resident memory every 5 ms until told to stop
#: (a line on stdin), then prints the peak as JSON. A separate process, because a thread of the
#: measured process does not run while native code (Qdrant's index build) holds the GIL, and the
#: peak falls there.
_SAMPLER = """
import json, select, sys
pid, peak, anon_peak = int(sys.argv[1]), {"total": 0, "anon": 0, "file": 0}, 0
def rss():
    try:
        with open(f"/proc/{pid}/status") as f:
            d = {l.split(":")[0]: int(l.split()[1]) // 1024 for l in f if l.startswith("Rss")}
        return d.get("RssAnon", 0), d.get("RssFile", 0) + d.get("RssShmem", 0)
    except OSError:
        return None
while not select.select([sys.stdin], [], [], 0.005)[0]:
    now = rss()
    if now is None:
        break
    anon_peak = max(anon_peak, now[0])
    if sum(now) > peak["total"]:
        peak = {"total": sum(now), "anon": now[0], "file": now[1]}
print(json.dumps({**peak, "anon_peak": anon_peak}))
"""


class RssSplit:
    """Where this process's peak RSS lies: anonymous memory (Python objects, model weights, the
    vector store's RAM) or mapped files (the vector store's segment files, which Qdrant maps while
    it builds an index: they count in RSS, but the kernel may drop them under pressure). Linux
    only (``/proc``); elsewhere :meth:`result` is empty.

        with RssSplit() as split:
            ...
        split.result()  # {"total": MB at the peak, "anon": ..., "file": ..., "anon_peak": ...}
    """

    def __enter__(self) -> RssSplit:
        self._proc = None
        if Path(f"/proc/{os.getpid()}/status").exists():
            self._proc = subprocess.Popen(  # noqa: S603 - our own interpreter and code
                [sys.executable, "-c", _SAMPLER, str(os.getpid())],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
        self._result: dict[str, int] = {}
        return self

    def __exit__(self, *_: object) -> None:
        if self._proc is not None:
            out, _ = self._proc.communicate("stop\n", timeout=30)
            self._result = json.loads(out) if out.strip() else {}

    def result(self) -> dict[str, int]:
        return dict(self._result)


def describe_rss_split(split: dict[str, int]) -> str:
    """:meth:`RssSplit.result` in words."""
    if not split:
        return "(no anonymous/mapped split on this platform)"
    return (f"at the peak {split['anon']} MB anonymous + {split['file']} MB mapped files; "
            f"anonymous alone peaked at {split['anon_peak']} MB")  # fmt: skip


class StageGrowth:
    """Each memory stage's seconds per part of an ingest, grouped by quarter of the ingest's parts:
    whether a stage's cost per part grows with the memory it adds to. A stage meant to cost what
    its batch costs should show four equal quarters; the cluster stage did not (session 53: its
    per-part time doubled from the first quarter of a 2Wiki ingest to the last, as label
    propagation grew a few clusters of hundreds of chunks that every later part touched).

        with StageGrowth(memory.ingestor.stages) as growth:
            memory.ingest(docs)
        growth.by_quarter()  # {"clusters": [s per part in each quarter], ...}

    It times each stage's ``run`` by wrapping it on the instance for the ``with`` block only.
    """

    def __init__(self, stages: Iterable[Any]) -> None:
        self._stages = list(stages)
        self.runs: dict[str, list[float]] = {}

    def __enter__(self) -> StageGrowth:
        for stage in self._stages:
            stage.run = self._timed(stage.name, stage.run)
        return self

    def __exit__(self, *_: object) -> None:
        for stage in self._stages:
            del stage.run  # the class's own method again

    def _timed(self, name: str, run: Callable[..., Any]) -> Callable[..., Any]:
        def timed_run(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return run(*args, **kwargs)
            finally:
                self.runs.setdefault(name, []).append(time.perf_counter() - started)

        return timed_run

    def by_quarter(self) -> dict[str, list[float]]:
        """Mean seconds per part in each quarter of a stage's runs (fewer than four runs: one value each)."""
        out: dict[str, list[float]] = {}
        for name, runs in self.runs.items():
            n = len(runs)
            quarters = (
                [runs[i * n // 4 : (i + 1) * n // 4] for i in range(4)] if n >= 4 else [[r] for r in runs]
            )
            out[name] = [statistics.fmean(q) for q in quarters]
        return out


def describe_growth(growth: dict[str, list[float]]) -> str:
    """:meth:`StageGrowth.by_quarter` in words."""
    return "; ".join(
        f"{name} {' / '.join(f'{s:.2f}' for s in quarters)}" for name, quarters in growth.items()
    )

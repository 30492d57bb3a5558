"""Shared set-up for benchmarks: their own data home and ports, a local Neo4j started
for the run (and stopped after it, if the run started it), and the shared data."""

from __future__ import annotations

import os
import statistics
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")

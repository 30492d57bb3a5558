"""Shared fixtures: the real local Neo4j (started once per session) and settings.

The suite uses its own data home and ports (``make test`` sets them; the
defaults below match) so it never touches a user's memory. The server writes
only to its log files and is stopped when the session ends if we started it.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
os.environ.setdefault("ENGRAMDB_HOME", str(REPO / ".test-home"))
os.environ.setdefault("ENGRAMDB_NEO4J_BOLT_PORT", "17687")
os.environ.setdefault("ENGRAMDB_NEO4J_HTTP_PORT", "17474")
os.environ.setdefault("ENGRAMDB_CONFIG", "none")

from engramdb.platform.config import Settings  # noqa: E402
from engramdb.platform.neo4j_server import LocalNeo4j  # noqa: E402

SHARED = Path(os.environ.get("ENGRAMDB_SHARED", REPO.parent / "shared"))


@pytest.fixture(scope="session")
def settings() -> Settings:
    return Settings()


@pytest.fixture(scope="session")
def neo4j_server(settings: Settings) -> Iterator[LocalNeo4j]:
    """The local server, started for the session (reused if already running)."""
    server = LocalNeo4j(settings)
    was_running = server.pid() is not None
    server.start()
    yield server
    if not was_running:
        server.stop()


@pytest.fixture(scope="session")
def driver(neo4j_server: LocalNeo4j, settings: Settings):
    from engramdb.platform.graph import apply_schema, connect

    drv = connect(settings)
    # The test home's database belongs to the suite alone: start every session empty.
    with drv.session() as session:
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS").consume()
    apply_schema(drv)
    yield drv
    drv.close()


@pytest.fixture
def namespace() -> str:
    """A fresh namespace per test, so tests never see each other's data."""
    return f"t{uuid.uuid4().hex[:12]}"


@pytest.fixture
def graph(driver, namespace: str, settings: Settings):
    from engramdb.platform.graph import Graph

    return Graph(driver, namespace, settings.neo4j_database)


@pytest.fixture
def isolated_settings(tmp_path: Path, neo4j_server: LocalNeo4j, settings: Settings) -> Settings:
    """Settings with a private data home (own embedded Qdrant, caches) that reach the
    session's Neo4j as a configured server instead of starting one of their own."""
    from pydantic import SecretStr

    return settings.model_copy(
        update={
            "home": tmp_path / "home",
            "neo4j_uri": neo4j_server.bolt_uri,
            "neo4j_password": SecretStr(neo4j_server.password()),
        }
    )


@pytest.fixture
def memory(isolated_settings: Settings, namespace: str):
    from engramdb.platform.memory import Memory

    mem = Memory(namespace=namespace, settings=isolated_settings)
    yield mem
    mem.close()


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The product's shared folder (benchmark data), beside the repository."""
    if not (SHARED / "data").is_dir():
        pytest.fail(f"benchmark data not found at {SHARED}; set ENGRAMDB_SHARED")
    return SHARED


@pytest.fixture(scope="session")
def musique_corpus(shared_dir: Path) -> list[dict]:
    import json

    return json.loads((shared_dir / "data" / "musique" / "corpus.json").read_text())

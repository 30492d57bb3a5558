"""Shared fixtures: the real local Neo4j (started once per session), settings, benchmark data.

Safety first. The ``driver`` fixture empties the database it reaches, so the
suite must never reach a database it did not start. A user who had
``ENGRAMDB_NEO4J_URI`` exported once lost a real graph that way. Hence:

* at import, every inherited ``ENGRAMDB_*`` variable (and the API keys the
  settings read) is removed from the environment, and the settings are rebuilt
  from nothing but the test home and the test ports (``ENGRAMDB_TEST_HOME``,
  ``ENGRAMDB_TEST_BOLT_PORT``, ``ENGRAMDB_TEST_HTTP_PORT``; defaults
  ``<repo>/.test-home``, 17687, 17474). No user config file is read either;
* before emptying anything, :func:`check_suite_owns_server` verifies that the
  target is the local server living in the test home on 127.0.0.1 and the test
  port, and stops the whole session otherwise.

The server writes only to its log files and is stopped when the session ends if
the session started it.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable, Iterator, MutableMapping, Sequence
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent

#: Variables that only steer the suite itself; every other ENGRAMDB_* is dropped.
KEPT_ENGRAMDB_VARIABLES = frozenset(
    {
        "ENGRAMDB_TEST_HOME",
        "ENGRAMDB_TEST_BOLT_PORT",
        "ENGRAMDB_TEST_HTTP_PORT",
        "ENGRAMDB_SHARED",  # where the benchmark data lives (read-only)
        "ENGRAMDB_NEO4J_LIB_DIR",  # where the Neo4j jars live (read-only)
    }
)
#: Keys the settings also read without the ENGRAMDB_ prefix: tests must never call paid services.
DROPPED_API_KEYS = frozenset({"VOYAGE_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "QDRANT_API_KEY"})


def isolate_environment(environ: MutableMapping[str, str]) -> tuple[Path, int, int]:
    """Strip ``environ`` of inherited engramdb settings and point it at the test home and ports.

    Why case-insensitive: pydantic-settings matches variable names regardless
    of case, so ``engramdb_neo4j_uri`` would configure the settings too.
    Returns ``(test_home, bolt_port, http_port)``.
    """
    for name in list(environ):
        upper = name.upper()
        inherited_setting = upper.startswith("ENGRAMDB_") and name not in KEPT_ENGRAMDB_VARIABLES
        if inherited_setting or upper in DROPPED_API_KEYS:
            del environ[name]
    home = Path(environ.get("ENGRAMDB_TEST_HOME") or REPO / ".test-home").resolve()
    bolt_port = int(environ.get("ENGRAMDB_TEST_BOLT_PORT") or 17687)
    http_port = int(environ.get("ENGRAMDB_TEST_HTTP_PORT") or 17474)
    environ.update(
        {
            "ENGRAMDB_HOME": str(home),
            "ENGRAMDB_NEO4J_BOLT_PORT": str(bolt_port),
            "ENGRAMDB_NEO4J_HTTP_PORT": str(http_port),
            "ENGRAMDB_CONFIG": "none",
        }
    )
    return home, bolt_port, http_port


TEST_HOME, TEST_BOLT_PORT, TEST_HTTP_PORT = isolate_environment(os.environ)

from engramdb.platform.config import Settings  # noqa: E402
from engramdb.platform.neo4j_server import LocalNeo4j  # noqa: E402

SHARED = Path(os.environ.get("ENGRAMDB_SHARED") or REPO.parent / "shared").expanduser()


# --------------------------------------------------------------------------- safety


def suite_server_problem(
    settings: Settings, server: LocalNeo4j, test_home: Path, bolt_port: int
) -> str | None:
    """Why ``server`` is not the suite's own Neo4j, or None when it is.

    The suite's own server is the local one (no external URI) whose home, pid
    file and Bolt port are the test ones, and which is running from that pid file.
    """
    home = test_home.resolve()
    if not settings.uses_local_neo4j:
        return f"the settings name an external Neo4j ({settings.neo4j_uri})"
    if settings.home.resolve() != home:
        return f"the settings' home {settings.home} is not the test home {home}"
    expected_uri = f"bolt://127.0.0.1:{bolt_port}"
    if server.bolt_uri != expected_uri:
        return f"the server listens on {server.bolt_uri}, not on the test port ({expected_uri})"
    if not server.pid_file.resolve().is_relative_to(home):
        return f"the server's pid file {server.pid_file} is outside the test home {home}"
    if server.pid() is None:
        return f"no Neo4j started from the test home is running (pid file {server.pid_file})"
    return None


def check_suite_owns_server(settings: Settings, server: LocalNeo4j) -> None:
    """Stop the whole session unless ``server`` is the suite's own test server."""
    problem = suite_server_problem(settings, server, TEST_HOME, TEST_BOLT_PORT)
    if problem is not None:
        pytest.exit(
            f"refusing to empty a Neo4j database the test suite did not start: {problem}. "
            "The suite only ever clears the local server in ENGRAMDB_TEST_HOME "
            f"({TEST_HOME}) on ENGRAMDB_TEST_BOLT_PORT ({TEST_BOLT_PORT}).",
            returncode=3,
        )


# --------------------------------------------------------------------------- Neo4j


@pytest.fixture(scope="session")
def settings() -> Settings:
    """The suite's settings: the test home and ports, nothing inherited."""
    return Settings(
        home=TEST_HOME,
        neo4j_bolt_port=TEST_BOLT_PORT,
        neo4j_http_port=TEST_HTTP_PORT,
        neo4j_uri=None,
        neo4j_password=None,
    )


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
    """A driver to the suite's own server, whose database starts every session empty."""
    from neo4j import GraphDatabase

    from engramdb.platform.graph import DRIVER_OPTIONS, apply_schema

    check_suite_owns_server(settings, neo4j_server)
    # Connect to exactly the URI that was checked, not to whatever the settings resolve to.
    drv = GraphDatabase.driver(
        neo4j_server.bolt_uri, auth=("neo4j", neo4j_server.password()), **DRIVER_OPTIONS
    )
    drv.verify_connectivity()
    with drv.session(database=settings.neo4j_database) as session:
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


def private_settings(home: Path, neo4j_server: LocalNeo4j, settings: Settings, **extra: object) -> Settings:
    """Settings with a private data home (own embedded Qdrant, caches) that reach the
    session's Neo4j as a configured server instead of starting one of their own."""
    from pydantic import SecretStr

    update = {
        "home": home,
        "neo4j_uri": neo4j_server.bolt_uri,
        "neo4j_password": SecretStr(neo4j_server.password()),
    }
    return settings.model_copy(update={**update, **extra})


def cli_environment(settings: Settings, namespace: str) -> dict[str, str]:
    """The environment of a CLI run on ``settings``' home and server, in ``namespace``, no config file."""
    return {
        "ENGRAMDB_HOME": str(settings.home),
        "ENGRAMDB_NEO4J_URI": str(settings.neo4j_uri),
        "ENGRAMDB_NEO4J_PASSWORD": settings.neo4j_password.get_secret_value(),
        "ENGRAMDB_NAMESPACE": namespace,
        "ENGRAMDB_CONFIG": "none",
    }


@pytest.fixture
def isolated_settings(tmp_path: Path, neo4j_server: LocalNeo4j, settings: Settings) -> Settings:
    return private_settings(tmp_path / "home", neo4j_server, settings)


@pytest.fixture
def cli_env(isolated_settings: Settings, namespace: str) -> dict[str, str]:
    return cli_environment(isolated_settings, namespace)


@pytest.fixture
def memory(isolated_settings: Settings, namespace: str):
    from engramdb.platform.interfaces.memory import Memory

    mem = Memory(namespace=namespace, settings=isolated_settings)
    yield mem
    mem.close()


def free_ports(count: int) -> list[int]:
    """Distinct local ports nothing listens on (all bound at once, then released)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


# --------------------------------------------------------------------------- benchmark data


def running_in_ci() -> bool:
    """CI has the benchmark data, so missing data there is a failure, not a skip."""
    return os.environ.get("CI", "").strip().lower() in {"true", "1", "yes"}


def require_shared(relative: str) -> Path:
    """``SHARED / relative`` if it exists; otherwise skip (fail in CI) naming what is missing."""
    path = SHARED / relative
    if not path.exists():
        message = (
            f"benchmark data missing: {path} does not exist; set ENGRAMDB_SHARED to the shared folder "
            f"(the one holding data/musique and data/2wiki; default {REPO.parent / 'shared'})"
        )
        if running_in_ci():
            pytest.fail(message + " (CI=true: the data must be present in CI)", pytrace=False)
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def shared_file() -> Callable[[str], Path]:
    """``shared_file("data/2wiki/corpus.json")``: the path, or a skip naming it (a failure in CI)."""
    return require_shared


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The product's shared folder (benchmark data), beside the repository."""
    require_shared("data")
    return SHARED


@pytest.fixture(scope="session")
def musique_corpus() -> list[dict]:
    import json

    return json.loads(require_shared("data/musique/corpus.json").read_text())


@pytest.fixture(scope="session")
def musique_questions() -> list[dict]:
    """The 50 MuSiQue dev questions with their paragraphs and gold decompositions."""
    import json

    return json.loads(require_shared("data/musique/questions.json").read_text())


@pytest.fixture(scope="session", autouse=True)
def rows_match_record_data() -> Iterator[None]:
    """Every row a test reads through :class:`engramdb.platform.graph.Graph` is also decoded the
    driver's slow, general way (``Record.data()``, which turns nodes and relationships into dicts)
    and must come out the same: ``Graph`` pairs keys with values because our queries return plain
    values, and a query that returns a node would fail here, in whichever test runs it."""
    from neo4j import Record

    from engramdb.platform import graph as graph_module

    fast = graph_module.row_dict

    def checked(keys: Sequence[str], record: Record) -> dict[str, Any]:
        row = fast(keys, record)
        assert row == record.data(), f"a query returned a graph entity, not plain values: {list(keys)}"
        return row

    graph_module.row_dict = checked
    yield
    graph_module.row_dict = fast

"""The test suite never touches a database it did not start, whatever the caller exported.

Regression: with ``ENGRAMDB_NEO4J_URI`` exported (a real external Neo4j), the
session's ``driver`` fixture emptied that database. The conftest now drops every
inherited engramdb setting and refuses to clear any server but its own.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from engramdb.platform.config import Settings
from engramdb.platform.neo4j_server import LocalNeo4j
from tests.conftest import (
    KEPT_ENGRAMDB_VARIABLES,
    REPO,
    TEST_BOLT_PORT,
    TEST_HOME,
    check_suite_owns_server,
    isolate_environment,
    suite_server_problem,
)


def test_isolation_drops_inherited_settings_and_api_keys(tmp_path: Path) -> None:
    environ = {
        "ENGRAMDB_NEO4J_URI": "bolt://db.example.com:7687",
        "engramdb_neo4j_uri": "bolt://db.example.com:7687",  # settings match names case-insensitively
        "ENGRAMDB_NEO4J_PASSWORD": "user-secret",
        "ENGRAMDB_HOME": "/home/user/.local/share/engramdb",
        "ENGRAMDB_QDRANT_URL": "http://qdrant.example.com:6333",
        "ENGRAMDB_CONFIG": "/home/user/engramdb.toml",
        "ENGRAMDB_LLM": "openai:gpt-4o-mini",
        "VOYAGE_API_KEY": "pa-user",
        "OPENAI_API_KEY": "sk-user",
        "ANTHROPIC_API_KEY": "sk-ant-user",
        "QDRANT_API_KEY": "q-user",
        "ENGRAMDB_TEST_HOME": str(tmp_path / "suite-home"),
        "ENGRAMDB_TEST_BOLT_PORT": "27001",
        "ENGRAMDB_TEST_HTTP_PORT": "27002",
        "ENGRAMDB_SHARED": "/data/shared",
        "ENGRAMDB_NEO4J_LIB_DIR": "/opt/neo4j-jars",
        "PATH": "/usr/bin",
    }

    home, bolt, http = isolate_environment(environ)

    assert (home, bolt, http) == ((tmp_path / "suite-home").resolve(), 27001, 27002)
    assert environ == {
        "ENGRAMDB_TEST_HOME": str(tmp_path / "suite-home"),
        "ENGRAMDB_TEST_BOLT_PORT": "27001",
        "ENGRAMDB_TEST_HTTP_PORT": "27002",
        "ENGRAMDB_SHARED": "/data/shared",
        "ENGRAMDB_NEO4J_LIB_DIR": "/opt/neo4j-jars",
        "PATH": "/usr/bin",
        "ENGRAMDB_HOME": str(home),
        "ENGRAMDB_NEO4J_BOLT_PORT": "27001",
        "ENGRAMDB_NEO4J_HTTP_PORT": "27002",
        "ENGRAMDB_CONFIG": "none",
    }
    assert set(KEPT_ENGRAMDB_VARIABLES) < set(environ)


def test_isolation_defaults_to_the_repository_test_home() -> None:
    environ = {"ENGRAMDB_HOME": "/home/user/data"}
    assert isolate_environment(environ) == ((REPO / ".test-home").resolve(), 17687, 17474)
    assert environ["ENGRAMDB_HOME"] == str((REPO / ".test-home").resolve())


def test_this_session_runs_on_the_test_home_only(settings: Settings) -> None:
    assert settings.neo4j_uri is None and settings.uses_local_neo4j
    assert settings.home == TEST_HOME
    assert settings.neo4j_bolt_port == TEST_BOLT_PORT
    assert settings.voyage_api_key is None and settings.openai_api_key is None
    assert not any(name.upper().startswith("ENGRAMDB_NEO4J_URI") for name in os.environ)


def test_guard_accepts_only_the_suites_own_running_server(
    settings: Settings, neo4j_server: LocalNeo4j, tmp_path: Path
) -> None:
    assert suite_server_problem(settings, neo4j_server, TEST_HOME, TEST_BOLT_PORT) is None

    external = settings.model_copy(update={"neo4j_uri": "bolt://db.example.com:7687"})
    problem = suite_server_problem(external, LocalNeo4j(external), TEST_HOME, TEST_BOLT_PORT)
    assert problem == "the settings name an external Neo4j (bolt://db.example.com:7687)"

    elsewhere = settings.model_copy(update={"home": tmp_path})
    problem = suite_server_problem(elsewhere, LocalNeo4j(elsewhere), TEST_HOME, TEST_BOLT_PORT)
    assert problem is not None and "is not the test home" in problem

    other_port = settings.model_copy(update={"neo4j_bolt_port": TEST_BOLT_PORT + 1})
    problem = suite_server_problem(other_port, LocalNeo4j(other_port), TEST_HOME, TEST_BOLT_PORT)
    assert problem is not None and "not on the test port" in problem

    # A test home whose server is not running (the user's server may hold the port).
    idle = settings.model_copy(update={"home": tmp_path})
    problem = suite_server_problem(idle, LocalNeo4j(idle), tmp_path, TEST_BOLT_PORT)
    assert problem is not None and "no Neo4j started from the test home is running" in problem


def test_guard_stops_the_session_before_clearing_a_foreign_server(settings: Settings) -> None:
    external = settings.model_copy(update={"neo4j_uri": "bolt://db.example.com:7687"})
    with pytest.raises(pytest.exit.Exception, match="refusing to empty a Neo4j database") as stopped:
        check_suite_owns_server(external, LocalNeo4j(external))
    assert stopped.value.returncode == 3


_CHILD_TEST = """
import os
from pathlib import Path


def test_session_ignores_the_exported_settings(settings, driver):
    assert settings.neo4j_uri is None
    assert settings.neo4j_password is None
    assert settings.home == Path({home!r})
    assert settings.neo4j_bolt_port == {bolt_port!r}
    assert settings.voyage_api_key is None
    assert "VOYAGE_API_KEY" not in os.environ
    # The database this session emptied is the suite's own: the parent's marker is gone.
    records, _, _ = driver.execute_query("MATCH (n:SuiteSafetyMarker) RETURN count(n) AS n")
    assert records[0]["n"] == 0
"""


def test_second_session_with_a_users_exports_clears_only_its_own_server(
    driver, settings: Settings, tmp_path: Path
) -> None:
    """A real second pytest session, started with a user's engramdb variables exported.

    The "external Neo4j" it is pointed at is a listening socket that records any
    connection, so even a regression cannot harm a database. The child's
    ``driver`` fixture empties the suite's own database (as every session does on
    start); the parent's marker node shows it was that one. Runs in the middle of
    the parent's session, which is safe: tests use fresh namespaces and no
    module-scoped graph data outlives its module.
    """
    test_file = tmp_path / "test_child_session.py"
    test_file.write_text(
        textwrap.dedent(_CHILD_TEST.format(home=str(settings.home), bolt_port=settings.neo4j_bolt_port))
    )
    user_home = tmp_path / "user-home"
    user_config = tmp_path / "user-engramdb.toml"
    marker = f"safety-{uuid.uuid4().hex[:12]}"
    driver.execute_query("CREATE (:SuiteSafetyMarker {namespace: $ns})", ns=marker)

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as external:
        external.bind(("127.0.0.1", 0))
        external.listen(8)
        external.setblocking(False)
        external_uri = f"bolt://127.0.0.1:{external.getsockname()[1]}"
        user_config.write_text(f'neo4j_uri = "{external_uri}"\nhome = "{user_home}"\n')
        env = {
            **os.environ,
            "ENGRAMDB_NEO4J_URI": external_uri,
            "ENGRAMDB_NEO4J_PASSWORD": "user-secret",
            "ENGRAMDB_HOME": str(user_home),
            "ENGRAMDB_CONFIG": str(user_config),
            "VOYAGE_API_KEY": "pa-user-key",
            "ENGRAMDB_TEST_HOME": str(settings.home),
            "ENGRAMDB_TEST_BOLT_PORT": str(settings.neo4j_bolt_port),
            "ENGRAMDB_TEST_HTTP_PORT": str(settings.neo4j_http_port),
            # `-p conftest` loads the suite's real conftest.py from here.
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "tests"), os.environ.get("PYTHONPATH")])),
        }
        child = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider", "-q", str(test_file)],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert child.returncode == 0, child.stdout[-3000:] + child.stderr[-3000:]
        assert "1 passed" in child.stdout
        with pytest.raises(BlockingIOError):
            external.accept()  # nobody ever connected to the "external" database

    assert not user_home.exists()  # nothing was written to the user's data home
    records, _, _ = driver.execute_query("MATCH (n:SuiteSafetyMarker {namespace: $ns}) RETURN n", ns=marker)
    assert records == []

"""The local Neo4j server: real start/stop, Browser, credentials, clear failures."""

from __future__ import annotations

import socket
import stat
import urllib.request
from pathlib import Path

import pytest
from neo4j import GraphDatabase

from engramdb.platform.config import Settings
from engramdb.platform.errors import Neo4jServerError
from engramdb.platform.neo4j_server import LocalNeo4j, java_major_version


def test_browser_served_and_bolt_answers_with_stored_password(neo4j_server: LocalNeo4j) -> None:
    with urllib.request.urlopen(neo4j_server.browser_url, timeout=10) as response:
        body = response.read().decode()
    assert response.status == 200
    assert "<title>Neo4j Browser</title>" in body

    password = neo4j_server.password_file.read_text().strip()
    with GraphDatabase.driver(neo4j_server.bolt_uri, auth=("neo4j", password)) as drv:
        records, _, _ = drv.execute_query("RETURN 1 AS one")
    assert records[0]["one"] == 1


def test_password_file_is_private(neo4j_server: LocalNeo4j) -> None:
    mode = stat.S_IMODE(neo4j_server.password_file.stat().st_mode)
    assert mode == 0o600
    assert len(neo4j_server.password_file.read_text().strip()) >= 24


def test_wrong_password_is_rejected(neo4j_server: LocalNeo4j) -> None:
    from neo4j.exceptions import AuthError

    with GraphDatabase.driver(neo4j_server.bolt_uri, auth=("neo4j", "not-the-password")) as drv:
        with pytest.raises(AuthError):
            drv.verify_connectivity()


def test_start_is_idempotent(neo4j_server: LocalNeo4j) -> None:
    pid = neo4j_server.pid()
    status = neo4j_server.start()
    assert status.running and status.pid == pid


def test_stop_then_start_keeps_data(neo4j_server: LocalNeo4j, driver, settings: Settings) -> None:
    marker = "restart-marker"
    driver.execute_query("MERGE (n:RestartProbe {namespace: 'restart-test', id: $id})", id=marker)
    pid = neo4j_server.pid()
    assert neo4j_server.stop() is True
    assert neo4j_server.pid() is None
    assert not neo4j_server.status().running
    with pytest.raises(OSError):
        Path(f"/proc/{pid}/cmdline").read_bytes()  # the process is gone

    neo4j_server.start()
    password = neo4j_server.password()
    with GraphDatabase.driver(neo4j_server.bolt_uri, auth=("neo4j", password)) as drv:
        records, _, _ = drv.execute_query("MATCH (n:RestartProbe {id: $id}) RETURN count(n) AS c", id=marker)
        drv.execute_query("MATCH (n:RestartProbe) DELETE n")
    assert records[0]["c"] == 1


def test_busy_port_fails_fast_with_clear_message(tmp_path: Path, settings: Settings) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        port = sock.getsockname()[1]
        busy = settings.model_copy(update={"home": tmp_path, "neo4j_bolt_port": port, "neo4j_http_port": port + 1})
        with pytest.raises(Neo4jServerError) as info:
            LocalNeo4j(busy).start()
    message = str(info.value)
    assert f"port {port}" in message and "already in use" in message
    assert "ENGRAMDB_NEO4J_BOLT_PORT" in message
    assert not (tmp_path / "neo4j" / "lib").exists()  # failed before any download


def test_missing_java_fails_fast_with_clear_message(tmp_path: Path, settings: Settings, monkeypatch) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    nojava = settings.model_copy(update={"home": tmp_path, "neo4j_bolt_port": 1, "neo4j_http_port": 2})
    with pytest.raises(Neo4jServerError) as info:
        LocalNeo4j(nojava).start()
    assert "Java not found" in str(info.value)
    assert "JAVA_HOME" in str(info.value)


def test_explicit_java_home_without_java_is_reported(tmp_path: Path, settings: Settings) -> None:
    wrong = settings.model_copy(update={"home": tmp_path, "java_home": tmp_path / "jdk"})
    with pytest.raises(Neo4jServerError, match="does not exist"):
        LocalNeo4j(wrong).java()


def test_old_java_is_rejected(tmp_path: Path, settings: Settings) -> None:
    jdk = tmp_path / "jdk8"
    (jdk / "bin").mkdir(parents=True)
    fake = jdk / "bin" / "java"
    fake.write_text('#!/bin/sh\necho \'openjdk version "1.8.0_292"\' >&2\n')
    fake.chmod(0o755)
    assert java_major_version(str(fake)) == 8
    old = settings.model_copy(update={"home": tmp_path, "java_home": jdk})
    with pytest.raises(Neo4jServerError, match="Java 8 found"):
        LocalNeo4j(old).java()


def test_server_output_goes_to_log_files_only(neo4j_server: LocalNeo4j) -> None:
    assert neo4j_server.console_log.is_file()
    assert (neo4j_server.logs_dir / "neo4j.log").is_file() or neo4j_server.console_log.stat().st_size > 0
    assert "Started" in neo4j_server.log_tail(500)

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
from tests.conftest import free_ports


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
        busy = settings.model_copy(
            update={"home": tmp_path, "neo4j_bolt_port": port, "neo4j_http_port": port + 1}
        )
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
    fake.write_text("#!/bin/sh\necho 'openjdk version \"1.8.0_292\"' >&2\n")
    fake.chmod(0o755)
    assert java_major_version(str(fake)) == 8
    old = settings.model_copy(update={"home": tmp_path, "java_home": jdk})
    with pytest.raises(Neo4jServerError, match="Java 8 found"):
        LocalNeo4j(old).java()


def test_server_output_goes_to_log_files_only(neo4j_server: LocalNeo4j) -> None:
    assert neo4j_server.console_log.is_file()
    assert (neo4j_server.logs_dir / "neo4j.log").is_file() or neo4j_server.console_log.stat().st_size > 0
    assert "Started" in neo4j_server.log_tail(500)


# ------------------------------------------------------- secrets, modes, disk use, jar cache


def _auth_ini_accepts(auth_ini: Path, password: str) -> bool:
    """Check Neo4j's stored credential (``neo4j:SHA-256,<hash>,<salt>,<iterations>:``) against a password."""
    import hashlib

    user, credential, _flags = auth_ini.read_text().strip().split(":")
    algorithm, digest_hex, salt_hex, iterations = credential.split(",")
    assert user == "neo4j" and algorithm == "SHA-256"
    digest = hashlib.sha256(bytes.fromhex(salt_hex) + password.encode()).digest()
    for _ in range(int(iterations) - 1):
        digest = hashlib.sha256(digest).digest()
    return digest.hex() == digest_hex


def _record_spawned_argv(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Record the argv of every process spawned while the test runs (real processes still run)."""
    import subprocess

    spawned: list[list[str]] = []
    real_popen = subprocess.Popen

    def recording_popen(args, *rest, **kwargs):  # type: ignore[no-untyped-def]
        spawned.append([str(a) for a in args])
        return real_popen(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", recording_popen)  # subprocess.run spawns through it too
    return spawned


def test_initial_password_never_appears_on_a_command_line(
    tmp_path: Path, settings: Settings, neo4j_server: LocalNeo4j, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / "cache").mkdir(parents=True)  # a data home left by an older engramdb, readable by all
    home.chmod(0o755)
    fresh = LocalNeo4j(settings.model_copy(update={"home": home, "neo4j_lib_dir": neo4j_server.lib}))
    fresh.write_config()
    spawned = _record_spawned_argv(monkeypatch)

    fresh._set_initial_password(fresh.java())

    password = fresh.password()
    admin_runs = [argv for argv in spawned if "set-initial-password" in argv]
    assert len(admin_runs) == 1 and admin_runs[0][-1].startswith("@")
    assert all(password not in " ".join(argv) for argv in spawned)
    assert not Path(admin_runs[0][-1][1:]).exists()  # the argument file is gone
    auth_ini = fresh.data_dir / "dbms" / "auth.ini"
    assert _auth_ini_accepts(auth_ini, password)  # Neo4j stored exactly our password
    modes = {
        path: stat.S_IMODE(path.stat().st_mode) for path in (home, fresh.home, fresh.password_file.parent)
    }
    assert modes == {home: 0o700, fresh.home: 0o700, fresh.password_file.parent: 0o700}
    assert stat.S_IMODE(fresh.password_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(auth_ini.stat().st_mode) == 0o600


def test_a_generated_password_never_starts_with_a_dash(
    tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """neo4j-admin reads an argument starting with "-" as an option, so the first start of a
    home whose password began with one failed ("Missing required parameter: '<password>'")."""
    import secrets

    drawn = iter(["-DSstartsWithADash", "_fine-after-a-redraw"])
    monkeypatch.setattr(secrets, "token_urlsafe", lambda n: next(drawn))
    fresh = LocalNeo4j(settings.model_copy(update={"home": tmp_path / "home"}))
    assert fresh.password() == "_fine-after-a-redraw"


def test_running_server_keeps_few_transaction_logs(neo4j_server: LocalNeo4j, driver) -> None:
    conf = (neo4j_server.conf_dir / "neo4j.conf").read_text().splitlines()
    assert "db.tx_log.rotation.retention_policy=2 files" in conf
    assert "db.tx_log.rotation.size=16M" in conf
    records, _, _ = driver.execute_query(
        "SHOW SETTINGS YIELD name, value WHERE name STARTS WITH 'db.tx_log.rotation' RETURN name, value"
    )
    live = {r["name"]: r["value"] for r in records}
    assert live == {"db.tx_log.rotation.retention_policy": "2 files", "db.tx_log.rotation.size": "16.00MiB"}


def test_jars_come_from_the_user_cache_unless_an_older_home_has_its_own(
    tmp_path: Path, settings: Settings, neo4j_server: LocalNeo4j, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    cache_lib = tmp_path / "cache" / "engramdb" / f"neo4j-{settings.neo4j_version}" / "lib"
    new_home = settings.model_copy(update={"home": tmp_path / "new", "neo4j_lib_dir": None})
    assert LocalNeo4j(new_home).lib == cache_lib

    old_home = settings.model_copy(update={"home": tmp_path / "old", "neo4j_lib_dir": None})
    legacy = tmp_path / "old" / "neo4j" / "lib"
    legacy.mkdir(parents=True)
    for jar in neo4j_server.lib.glob("*.jar"):
        (legacy / jar.name).symlink_to(jar)
    server = LocalNeo4j(old_home)
    assert server.lib == legacy and server.is_installed()  # used in place, nothing downloaded

    explicit = old_home.model_copy(update={"neo4j_lib_dir": tmp_path / "jars"})
    assert LocalNeo4j(explicit).lib == tmp_path / "jars"  # an explicit folder always wins


_INSTALL = """
import sys
from engramdb.platform.config import Settings
from engramdb.platform.neo4j_server import LocalNeo4j
server = LocalNeo4j(Settings(home=sys.argv[1]))
server.install()
print(server.lib, server.is_installed())
"""


def test_concurrent_installs_fetch_the_jars_once_into_the_shared_cache(tmp_path: Path) -> None:
    """Two homes installing at once (real Maven, from its local repository after the first
    download): one fetch under the install lock, both get the same complete folder."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("ENGRAMDB_NEO4J_LIB_DIR", None)
    homes = [tmp_path / "one", tmp_path / "two"]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _INSTALL, str(h)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for h in homes
    ]
    outputs = [p.communicate(timeout=900) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    lib = tmp_path / "cache" / "engramdb" / "neo4j-5.26.30" / "lib"
    assert [out.split() for out, _ in outputs] == [[str(lib), "True"]] * 2
    assert sum((h / "neo4j" / "logs" / "install.log").is_file() for h in homes) == 1  # Maven ran once
    assert sorted(p.name for p in lib.parent.iterdir()) == [".lib.install.lock", "lib"]  # no staging left
    assert (lib / "neo4j-server-5.26.30.jar").is_file() and not list(lib.glob("*.xml"))


def test_a_jvm_option_the_jvm_refuses_fails_start_with_its_words(tmp_path: Path, settings: Settings) -> None:
    ports = free_ports(2)
    wrong = settings.model_copy(update={
        "home": tmp_path, "neo4j_bolt_port": ports[0], "neo4j_http_port": ports[1],
        "neo4j_jvm_options": "-XX:+NoSuchEngramdbOption",
    })  # fmt: skip
    with pytest.raises(Neo4jServerError) as info:
        LocalNeo4j(wrong).start()
    assert "exited during start-up" in str(info.value) and "NoSuchEngramdbOption" in str(info.value)


@pytest.mark.parametrize("options", ["-XX:Foo='unclosed", "TieredStopAtLevel=1"])
def test_jvm_options_that_are_not_options_are_refused_when_read(options: str) -> None:
    with pytest.raises(ValueError, match="neo4j_jvm_options"):
        Settings(neo4j_jvm_options=options)

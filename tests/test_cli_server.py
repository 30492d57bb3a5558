"""The CLI goes through a running ``engramdb serve`` of its data home by itself.

Real processes throughout: the server (started as tests/test_server.py starts
it), and each CLI command as its own ``engramdb`` subprocess, so the embedded
store's single-owner rule is what it is in use: without the server, ``ask``
during ``ingest`` would be refused. Every process is stopped by the test that
started it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

from engramdb.platform.config import Settings
from engramdb.platform.interfaces.server_discovery import server_file
from tests.conftest import cli_environment, private_settings
from tests.test_server import CORPUS, ONE_HOP, ingest, people, start_server

ENGRAMDB = Path(sys.executable).parent / "engramdb"
#: Documents of the long ingest: enough that it is still running while ask and stats finish.
LONG_INGEST = 300


def engramdb(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(ENGRAMDB), *args], env=env, capture_output=True, text=True, timeout=timeout)


def _finished(process: subprocess.Popen[str]) -> subprocess.CompletedProcess[str]:
    try:
        out, err = process.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate(timeout=30)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def test_ask_and_stats_answer_while_an_ingest_runs_through_the_server(
    tmp_path: Path, neo4j_server, settings: Settings, driver
) -> None:
    own = private_settings(tmp_path / "home", neo4j_server, settings)
    namespace = f"cli{uuid.uuid4().hex[:8]}"
    served = start_server(own, tmp_path)
    try:
        record = json.loads(server_file(own.home).read_text())
        assert record == {"url": served.url, "pid": served.process.pid}
        with served.client() as client:
            assert ingest(client, namespace, CORPUS)["state"] == "done"
        corpus = tmp_path / "people.json"
        corpus.write_text(json.dumps(people(LONG_INGEST)))
        env = {**os.environ, **cli_environment(own, namespace)}
        env.pop("ENGRAMDB_SERVER_URL", None)
        with open(tmp_path / "ingest.out", "w") as out, open(tmp_path / "ingest.err", "w") as err:
            long_ingest = subprocess.Popen(
                [str(ENGRAMDB), "ingest", str(corpus)], env=env, stdout=out, stderr=err
            )
        try:
            deadline = time.monotonic() + 120
            while "ingesting through" not in (tmp_path / "ingest.err").read_text():
                assert long_ingest.poll() is None, (tmp_path / "ingest.err").read_text()
                assert time.monotonic() < deadline, "the ingest never reached the server"
                time.sleep(0.2)
            readers = [
                subprocess.Popen(
                    [str(ENGRAMDB), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
                )  # fmt: skip
                for args in (("ask", ONE_HOP, "--json"), ("stats", "--json"), ("documents", "--json"))
            ]
            asked, counted, listed = (_finished(p) for p in readers)
            still_running = long_ingest.poll() is None
            assert long_ingest.wait(600) == 0, (tmp_path / "ingest.err").read_text()
        finally:
            if long_ingest.poll() is None:
                long_ingest.kill()
                long_ingest.wait(30)
        assert asked.returncode == 0, asked.stderr
        assert json.loads(asked.stdout)["answer"].endswith("Tennessee")
        assert counted.returncode == 0, counted.stderr
        assert json.loads(counted.stdout)["documents_done"] >= len(CORPUS)
        assert listed.returncode == 0 and len(json.loads(listed.stdout)) >= len(CORPUS)
        assert still_running, "ask, stats and documents must have run during the ingest"
        assert f"{LONG_INGEST} documents: {LONG_INGEST} ingested" in (tmp_path / "ingest.out").read_text()
        with served.client() as client:
            final = client.get(f"/v1/namespaces/{namespace}/stats").json()
        assert final["documents_done"] == len(CORPUS) + LONG_INGEST and final["documents_pending"] == 0

        deleted = engramdb(env, "delete", "p0", "no-such-id")
        assert (
            deleted.returncode == 1 and "'no-such-id'" in deleted.stderr and "none of the 2" in deleted.stderr
        )
        deleted = engramdb(env, "delete", "p0")
        assert deleted.returncode == 0 and "deleted p0" in deleted.stdout
        log = served.log_path.read_text()
        for route in (f"POST /v1/namespaces/{namespace}/ask", f"GET /v1/namespaces/{namespace}/stats",
                      f"DELETE /v1/namespaces/{namespace}/documents"):  # fmt: skip
            assert route in log, route

        # --server names a server explicitly (here from another, empty data home), with the token given.
        elsewhere = {
            **env,
            "ENGRAMDB_HOME": str(tmp_path / "other-home"),
            "ENGRAMDB_SERVER_TOKEN": served.token,
        }
        remote_stats = engramdb(elsewhere, "--server", served.url, "stats", "--json")
        assert remote_stats.returncode == 0, remote_stats.stderr
        assert json.loads(remote_stats.stdout)["documents_done"] == len(CORPUS) + LONG_INGEST - 1
        refused = engramdb({**elsewhere, "ENGRAMDB_SERVER_TOKEN": "wrong"}, "--server", served.url, "stats")
        assert refused.returncode == 1 and refused.stderr.startswith(
            "error: the engramdb server refused the token"
        )
    finally:
        assert served.stop() == 0
    assert not server_file(own.home).exists()  # a clean stop removes the record


def test_a_record_left_by_a_dead_server_is_ignored_and_removed(
    tmp_path: Path, neo4j_server, settings: Settings, driver
) -> None:
    own = private_settings(tmp_path / "home", neo4j_server, settings)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait(30)
    record = server_file(own.home)
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"url": "http://127.0.0.1:9", "pid": dead.pid}))
    env = {**os.environ, **cli_environment(own, f"dead{uuid.uuid4().hex[:8]}")}
    env.pop("ENGRAMDB_SERVER_URL", None)
    counted = engramdb(env, "stats", "--json")
    assert counted.returncode == 0, counted.stderr
    assert json.loads(counted.stdout)["documents"] == 0
    assert not record.exists()


def test_the_refusal_of_a_second_opener_says_how_to_serve_instead(
    tmp_path: Path, neo4j_server, settings: Settings, driver
) -> None:
    """With the store held by another process that is not a server, the error says to run one."""
    from engramdb.platform.interfaces.memory import Memory

    own = private_settings(tmp_path / "home", neo4j_server, settings)
    namespace = f"held{uuid.uuid4().hex[:8]}"
    env = {**os.environ, **cli_environment(own, namespace)}
    env.pop("ENGRAMDB_SERVER_URL", None)
    with Memory(namespace, own) as memory:
        memory.stats()  # this process now holds the embedded store
        refused = engramdb(env, "stats")
    assert refused.returncode == 1
    assert "open in another process" in refused.stderr and "run `engramdb serve`" in refused.stderr

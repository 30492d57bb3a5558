"""``engramdb serve`` end to end: the real command in a subprocess, talked to over HTTP.

Each server is ``.venv/bin/engramdb serve --port 0`` with a private data home
(its own embedded vector store, token and ``logs/server.log``) reaching the
session's Neo4j as a configured server, exactly as the CLI tests run the CLI.
The URL comes from the one startup line the command prints on stderr. Every
server started here is stopped with SIGTERM by the fixture or test that
started it (killed only if it does not stop), so nothing outlives the tests.

The answers are compared with the SDK's on the same memory: the embedded
vector store has one owner, so the test stops the server (which must release
it), asks through ``Memory`` in this process, and starts the server again.
"""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from engramdb.platform.config import Settings
from engramdb.platform.interfaces.cli import main
from engramdb.platform.interfaces.memory import Memory
from engramdb.retrieval.strategy import strategy_names
from tests.conftest import cli_environment, private_settings

ENGRAMDB = Path(sys.executable).parent / "engramdb"
CORPUS = json.loads((Path(__file__).parent / "fixtures" / "hypergraph_corpus.json").read_text())
ONE_HOP = "Where did Hank Snow die?"
TWO_HOP = (
    "Who was the first president of the association that published the Journal of Psychotherapy Integration?"
)
#: A small body limit for the module's server, so the 413 tests need not send 10 MB.
BODY_LIMIT = 64 * 1024
STARTUP_SECONDS = 240
STARTUP_LINE = re.compile(r"engramdb serving on (http://\S+) ")


@dataclass
class Served:
    """One running ``engramdb serve`` process and how to reach it."""

    process: subprocess.Popen[bytes]
    settings: Settings
    url: str
    token: str
    stderr_path: Path
    env: dict[str, str] = field(repr=False)

    @property
    def log_path(self) -> Path:
        return self.settings.home / "logs" / "server.log"

    def client(self, token: str | None = "admin", timeout: float = 120.0) -> httpx.Client:
        """An HTTP client; ``token="admin"`` sends the admin token, None sends none."""
        headers = {}
        if token is not None:
            headers["Authorization"] = f"Bearer {self.token if token == 'admin' else token}"
        return httpx.Client(base_url=self.url, headers=headers, timeout=timeout)

    def stop(self, timeout: float = 120.0) -> int:
        """SIGTERM, then wait; returns the exit status (killed, and the test failed, if it hangs)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(30)
                pytest.fail(
                    f"engramdb serve did not stop within {timeout} s of SIGTERM; log: {self.log_tail()}"
                )
        return self.process.returncode

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def log_tail(self, lines: int = 40) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else "(no log)"
        return "\n".join(text.splitlines()[-lines:])


def start_server(settings: Settings, workdir: Path, *args: str, **env_extra: str) -> Served:
    """``engramdb serve --port 0 ARGS`` on ``settings``' home; returns once it printed its URL."""
    workdir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **cli_environment(settings, "default"), **env_extra}
    stderr_path = workdir / f"serve-{uuid.uuid4().hex[:6]}.stderr"
    with open(stderr_path, "wb") as err, open(workdir / "serve.stdout", "ab") as out:
        process = subprocess.Popen([str(ENGRAMDB), "serve", "--port", "0", *args], env=env, stdout=out,
                                   stderr=err, cwd=workdir)  # fmt: skip
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        match = STARTUP_LINE.search(stderr_path.read_text(errors="replace"))
        if match:
            token = (settings.home / "server" / "token").read_text().strip()
            return Served(process, settings, match.group(1), token, stderr_path, env)
        if process.poll() is not None:
            pytest.fail(f"engramdb serve exited {process.returncode}: {stderr_path.read_text()}")
        time.sleep(0.1)
    process.kill()
    process.wait(30)
    pytest.fail(f"engramdb serve printed no URL within {STARTUP_SECONDS} s: {stderr_path.read_text()}")


def wait_for_job(client: httpx.Client, job_id: str, timeout: float = 600.0) -> dict[str, Any]:
    """Poll the job until it is done or failed; every poll must succeed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        response = client.get(f"/v1/jobs/{job_id}")
        assert response.status_code == 200, response.text
        job = response.json()
        if job["state"] in ("done", "failed"):
            return job
        time.sleep(0.2)
    pytest.fail(f"job {job_id} did not finish within {timeout} s")


def ingest(client: httpx.Client, namespace: str, documents: list[Any]) -> dict[str, Any]:
    response = client.post(f"/v1/namespaces/{namespace}/documents", json={"documents": documents})
    assert response.status_code == 202, response.text
    return wait_for_job(client, response.json()["job_id"])


def people(count: int) -> list[dict[str, str]]:
    """``count`` short distinct documents (each one batch item, so progress moves per document)."""
    return [{"id": f"p{i}", "title": f"Person {i}", "text": f"Person{i} Example was born in Town{i}. "
             f"Town{i} lies in the region of Area{i}. Person{i} Example wrote the novel Book{i}."}
            for i in range(count)]  # fmt: skip


FIRST = (
    "Anna",
    "Erik",
    "Maria",
    "Johan",
    "Karin",
    "Lars",
    "Ingrid",
    "Nils",
    "Sofia",
    "Olof",
    "Elsa",
    "Gustav",
)
TOWNS = {"Lund": "Sweden", "Bergen": "Norway", "Aarhus": "Denmark", "Uppsala": "Sweden", "Tromsø": "Norway",
         "Odense": "Denmark", "Malmö": "Sweden", "Stavanger": "Norway", "Aalborg": "Denmark", "Gävle": "Sweden",
         "Narvik": "Norway", "Vejle": "Denmark"}  # fmt: skip


def teachers(count: int) -> list[dict[str, str]]:
    """``count`` documents whose entities the extractor types the same wherever they appear (towns and
    countries shared between documents), so the memory they make does not depend on the order in which
    documents are written (reconciling a name seen with two types does)."""
    towns = list(TOWNS)
    documents = []
    for i in range(count):
        name, town = (
            f"{FIRST[i % 12]} {('Berg', 'Lind', 'Holm', 'Dahl')[i // 12 * 2 % 4 + i % 2]}",
            towns[i % 12],
        )
        documents.append({"id": f"t{i}", "title": name, "text": f"{name} was born in {town} in {1900 + i}. "
                          f"{name} later taught history at a school in {TOWNS[town]}."})  # fmt: skip
    return documents


def cli(served: Served, *args: str) -> Any:
    return CliRunner().invoke(main, list(args), env=cli_environment(served.settings, "default"),
                              catch_exceptions=False)  # fmt: skip


def comparable(result: dict[str, Any]) -> dict[str, Any]:
    """An ask result as JSON would carry it, without its timings (the only part that varies)."""
    data = json.loads(json.dumps(result, default=str))
    data.pop("timings")
    return data


def error_of(response: httpx.Response, status: int) -> dict[str, Any]:
    """The response's ``error`` object, after checking the status and the JSON error shape."""
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"} and {"code", "message"} <= set(body["error"]), body
    assert "Traceback" not in response.text
    return body["error"]


# --------------------------------------------------------------------------- the shared server


@pytest.fixture(scope="module")
def served(tmp_path_factory, neo4j_server, settings, driver) -> Iterator[Served]:
    """One server for the module (small body limit), stopped at the end whatever happened."""
    root = tmp_path_factory.mktemp("server")
    server = start_server(private_settings(root / "home", neo4j_server, settings), root,
                          ENGRAMDB_SERVER_MAX_BODY_BYTES=str(BODY_LIMIT))  # fmt: skip
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def corpus(served: Served) -> str:
    """A namespace holding the five documents of tests/fixtures/hypergraph_corpus.json."""
    namespace = f"srv{uuid.uuid4().hex[:10]}"
    with served.client() as client:
        job = ingest(client, namespace, CORPUS)
    assert job["state"] == "done" and job["report"]["ingested"] == len(CORPUS), job
    return namespace


def test_health_answers_without_a_token(served: Served) -> None:
    with served.client(token=None) as client:
        response = client.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "neo4j": True, "vectors": True}


def test_every_v1_route_refuses_a_missing_or_wrong_token(served: Served, corpus: str) -> None:
    routes = [("GET", "/v1/strategies", None), ("POST", f"/v1/namespaces/{corpus}/ask", {"question": ONE_HOP}),
              ("POST", f"/v1/namespaces/{corpus}/documents", {"documents": ["Written by nobody."]}),
              ("GET", f"/v1/namespaces/{corpus}/documents", None), ("GET", f"/v1/namespaces/{corpus}/stats", None),
              ("DELETE", f"/v1/namespaces/{corpus}/documents", {"ids": ["Hank Snow"]}),
              ("POST", f"/v1/namespaces/{corpus}/cypher", {"query": "MATCH (n) RETURN count(n)"}),
              ("GET", "/v1/jobs/anything", None)]  # fmt: skip
    with served.client() as admin:
        before = admin.get(f"/v1/namespaces/{corpus}/stats").json()
    for header in (None, "Bearer wrong-token", f"Basic {served.token}", "Bearer", served.token):
        headers = {"Authorization": header} if header is not None else {}
        with httpx.Client(base_url=served.url, headers=headers, timeout=60) as client:
            for method, path, body in routes:
                response = client.request(method, path, json=body)
                error = error_of(response, 401)
                assert error["code"] == "unauthorized" and response.headers["www-authenticate"] == "Bearer"
            # the token is checked before the body is even parsed
            garbage = client.post(f"/v1/namespaces/{corpus}/ask", content=b"{not json",
                                  headers={"content-type": "application/json"})  # fmt: skip
            assert error_of(garbage, 401)["code"] == "unauthorized"
    with served.client() as admin:
        assert admin.get(f"/v1/namespaces/{corpus}/stats").json() == before


def test_token_files_are_private_and_the_cli_shows_and_creates_tokens(served: Served) -> None:
    folder = served.settings.home / "server"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "token").stat().st_mode) == 0o600
    shown = cli(served, "token", "show")
    assert shown.exit_code == 0 and shown.stdout.strip() == served.token

    created = cli(served, "token", "create", "--namespace", "team-a")
    assert created.exit_code == 0, created.output
    token = created.stdout.strip()
    tokens_file = folder / "tokens.json"
    assert stat.S_IMODE(tokens_file.stat().st_mode) == 0o600
    stored = tokens_file.read_text()
    assert token not in stored  # only the hash is kept
    import hashlib

    assert hashlib.sha256(token.encode()).hexdigest() in stored
    bad = cli(served, "token", "create", "--namespace", "no spaces")
    assert bad.exit_code == 1 and "invalid namespace" in bad.output


def test_strategies_are_listed_with_their_knobs(served: Served) -> None:
    with served.client() as client:
        data = client.get("/v1/strategies").json()["strategies"]
    assert [s["name"] for s in data] == strategy_names()
    chain = next(s for s in data if s["name"] == "chain")
    assert chain["defaults"]["beam_width"] == 5 and chain["defaults"]["budget"] is None
    assert "beam_width" in chain["schema"]["properties"] and chain["summary"]
    assert all("budget" in s["schema"]["properties"] for s in data)


# --------------------------------------------------------------------------- ingest, ask, delete


def test_ingest_ask_and_delete_over_http_match_the_sdk(
    tmp_path: Path, neo4j_server, settings, driver
) -> None:
    """Job -> documents -> ask (dense, chain) equal to Memory.ask on the same memory -> delete -> counts back."""
    home_settings = private_settings(tmp_path / "home", neo4j_server, settings)
    namespace = f"rt{uuid.uuid4().hex[:10]}"
    server = start_server(home_settings, tmp_path)
    try:
        with server.client() as client:
            empty = client.get(f"/v1/namespaces/{namespace}/stats").json()
            assert empty["documents"] == 0 and empty["qa_vectors"] == 0
            # The client that started the job goes away; the job runs on regardless.
            with server.client() as starter:
                started = starter.post(f"/v1/namespaces/{namespace}/documents", json={"documents": CORPUS})
            assert started.status_code == 202 and started.headers["location"].endswith(
                started.json()["job_id"]
            )
            job = wait_for_job(client, started.json()["job_id"])
            assert job["state"] == "done" and job["namespace"] == namespace and job["failures"] == []
            assert job["documents_done"] == job["documents_total"] == len(CORPUS)
            assert job["chunks_done"] == job["chunks_total"] > 0
            assert job["report"]["ingested"] == len(CORPUS) and job["report"]["qa_pairs"] > 0

            listed = client.get(f"/v1/namespaces/{namespace}/documents").json()
            assert listed["total"] == len(CORPUS)
            assert sorted(d["title"] for d in listed["documents"]) == sorted(d["title"] for d in CORPUS)
            assert all(d["status"] == "done" for d in listed["documents"])
            page = client.get(
                f"/v1/namespaces/{namespace}/documents", params={"limit": 2, "offset": 1}
            ).json()
            assert page["documents"] == listed["documents"][1:3]
            full = client.get(f"/v1/namespaces/{namespace}/stats").json()

            asked = {}
            for strategy, question in (("dense", ONE_HOP), ("chain", ONE_HOP), ("chain", TWO_HOP)):
                response = client.post(f"/v1/namespaces/{namespace}/ask",
                                       json={"question": question, "strategy": strategy})  # fmt: skip
                assert response.status_code == 200, response.text
                asked[strategy, question] = response.json()
            assert asked["chain", ONE_HOP]["answer"].endswith("Tennessee")
            assert asked["chain", TWO_HOP]["answer"] == "G. Stanley Hall"
            assert any("Madison" in text for text in asked["dense", ONE_HOP]["evidence_text"])
            budgeted = client.post(f"/v1/namespaces/{namespace}/ask",
                                   json={"question": ONE_HOP, "budget": 32, "options": {"beam_width": 3}})  # fmt: skip
            assert budgeted.status_code == 200 and budgeted.json()["evidence_tokens"] <= 32
        assert server.stop() == 0  # SIGTERM: a clean stop, exit status 0
        assert server.stderr().strip().count("\n") == 0, server.stderr()  # one startup line, nothing else
        assert "closed every memory and store" in server.log_path.read_text()

        # The server released the vector store: the SDK opens the same memory and answers the same.
        with Memory(namespace=namespace, settings=home_settings) as memory:
            for (strategy, question), remote in asked.items():
                assert comparable(remote) == comparable(memory.ask(question, strategy=strategy).to_dict())

        server = start_server(home_settings, tmp_path)  # the same home again: the same token
        with server.client() as client:
            ids = [d["id"] for d in listed["documents"]]
            deleted = client.request("DELETE", f"/v1/namespaces/{namespace}/documents", json={"ids": ids[:2]})
            assert deleted.status_code == 200, deleted.text
            assert [r["doc_id"] for r in deleted.json()["deleted"]] == ids[:2]
            after = client.get(f"/v1/namespaces/{namespace}/stats").json()
            assert after["documents"] == len(CORPUS) - 2 and after["qa_pairs"] < full["qa_pairs"]
            deleted = client.request("DELETE", f"/v1/namespaces/{namespace}/documents", json={"ids": ids[2:]})
            assert deleted.status_code == 200, deleted.text
            back = client.get(f"/v1/namespaces/{namespace}/stats").json()
            assert back == empty
            assert error_of(client.post(f"/v1/namespaces/{namespace}/ask", json={"question": ONE_HOP}),
                            404)["code"] == "empty_namespace"  # fmt: skip
    finally:
        server.stop()


# --------------------------------------------------------------------------- bad input


def test_bad_input_gets_a_4xx_json_error_and_writes_nothing(served: Served, corpus: str) -> None:
    ns = f"/v1/namespaces/{corpus}"
    other = f"bad{uuid.uuid4().hex[:8]}"
    json_header = {"content-type": "application/json"}
    cases: list[tuple[str, str, dict[str, Any], int, str]] = [
        ("POST", f"{ns}/ask", {"content": b'{"question": ', "headers": json_header}, 400, "malformed_json"),
        ("POST", f"{ns}/ask", {"json": {"question": 5}}, 422, "invalid_request"),
        ("POST", f"{ns}/ask", {"json": {"question": ONE_HOP, "colour": "red"}}, 422, "invalid_request"),
        ("POST", f"{ns}/ask", {"json": {"question": ONE_HOP, "budget": 5}}, 422, "invalid_request"),
        ("POST", f"{ns}/ask", {"json": {"question": ONE_HOP, "decomposition": "x"}}, 422, "invalid_request"),
        ("POST", f"{ns}/ask", {"data": {"question": ONE_HOP}}, 415, "unsupported_media_type"),
        ("POST", f"{ns}/ask", {"json": {"question": ONE_HOP, "strategy": "nope"}}, 400, "invalid_input"),
        ("POST", f"{ns}/ask", {"json": {"question": ONE_HOP, "options": {"beam_wdth": 3}}}, 400, "invalid_input"),
        ("POST", f"{ns}/ask", {"json": {"question": ONE_HOP, "options": {"beam_width": -1}}}, 400, "invalid_input"),
        ("POST", f"{ns}/ask", {"json": {"question": ONE_HOP, "options": {"chat_model": "x"}}}, 400, "invalid_input"),
        ("POST", f"{ns}/ask", {"json": {"question": ONE_HOP, "budget": 64, "options": {"budget": 64}}}, 400,
         "invalid_input"),
        ("POST", f"{ns}/ask", {"json": {"question": "  "}}, 400, "invalid_input"),
        ("POST", f"{ns}/ask", {"content": b'{"question": "\\ud800?"}', "headers": json_header}, 400, "invalid_input"),
        ("POST", "/v1/namespaces/no!pe/ask", {"json": {"question": ONE_HOP}}, 400, "invalid_namespace"),
        ("POST", f"/v1/namespaces/{other}/ask", {"json": {"question": ONE_HOP}}, 404, "empty_namespace"),
        ("POST", f"{ns}/documents", {"json": {"documents": []}}, 400, "invalid_input"),
        ("POST", f"{ns}/documents", {"json": []}, 400, "invalid_input"),
        ("POST", f"{ns}/documents", {"json": {"documents": [{"title": "no text"}]}}, 422, "invalid_request"),
        ("POST", f"{ns}/documents", {"json": {"documents": [{"text": "   "}]}}, 400, "invalid_input"),
        ("POST", f"{ns}/documents", {"json": {"documents": [{"text": "a b", "id": "x"}, {"text": "c", "id": "x"}]}},
         400, "invalid_input"),
        ("POST", f"{ns}/documents", {"json": {"documents": [{"text": "ok", "id": "x" * 501}]}}, 400,
         "invalid_input"),
        ("POST", f"{ns}/documents", {"json": {"documents": ["x" * BODY_LIMIT]}}, 413, "body_too_large"),
        ("POST", f"{ns}/documents", {"content": iter([b'{"documents": ["', b"y" * BODY_LIMIT, b'"]}']),
                                     "headers": json_header}, 413, "body_too_large"),  # chunked, no length
        ("POST", f"/v1/namespaces/{other}/documents", {"json": {"documents": [{"text": "ok", "metadata": 3}]}},
         422, "invalid_request"),
        ("GET", f"{ns}/documents", {"params": {"status": "lost"}}, 400, "invalid_input"),
        ("GET", f"{ns}/documents", {"params": {"limit": -1}}, 422, "invalid_request"),
        ("GET", f"{ns}/documents", {"params": {"offset": "x"}}, 422, "invalid_request"),
        ("DELETE", f"{ns}/documents", {"json": {"ids": []}}, 400, "invalid_input"),
        ("DELETE", f"{ns}/documents", {"json": {"ids": "Hank Snow"}}, 422, "invalid_request"),
        ("POST", f"{ns}/cypher", {"json": {"query": ""}}, 400, "invalid_input"),
        ("POST", f"{ns}/cypher", {"json": {"query": "MATCH (n) RETURN n", "timeout": 0}}, 422, "invalid_request"),
        ("POST", f"{ns}/cypher", {"json": {"query": "MATCH (n) RETURN n", "limit": 0}}, 422, "invalid_request"),
        ("POST", f"{ns}/cypher", {"json": {"query": "MATCH (n RETURN n"}}, 400, "invalid_input"),
        ("POST", f"{ns}/cypher", {"json": {"query": "MATCH (n {id: $id}) RETURN n"}}, 400, "invalid_input"),
        ("GET", "/v1/jobs/no-such-job", {}, 404, "job_not_found"),
        ("GET", "/v1/no-such-route", {}, 404, "not_found"),
        ("PUT", f"{ns}/stats", {}, 405, "method_not_allowed"),
    ]  # fmt: skip
    with served.client() as client:
        before = client.get(f"{ns}/stats").json()
        listed = client.get(f"{ns}/documents").json()
        for method, path, kwargs, status, code in cases:
            error = error_of(client.request(method, path, **kwargs), status)
            assert error["code"] == code, (method, path, kwargs, error)
        # one unknown id among known ones: a 404 naming it, and nothing deleted
        known = [d["id"] for d in listed["documents"]][:2]
        missing = client.request("DELETE", f"{ns}/documents", json={"ids": [*known, "gone-1", "gone-2"]})
        error = error_of(missing, 404)
        assert error["code"] == "documents_not_found" and error["missing"] == ["gone-1", "gone-2"]
        assert "'gone-1'" in error["message"] and "'gone-2'" in error["message"]
        assert client.get(f"{ns}/stats").json() == before
        assert client.get(f"{ns}/documents").json() == listed
        assert client.get(f"/v1/namespaces/{other}/stats").json()["documents"] == 0
        assert client.get("/health").json()["status"] == "ok"


def test_a_write_in_the_cypher_endpoint_is_refused_and_reads_work(served: Served, corpus: str) -> None:
    path = f"/v1/namespaces/{corpus}/cypher"
    count = "MATCH (n) WHERE n.namespace = $namespace RETURN count(n) AS nodes"
    with served.client() as client:
        nodes = client.post(path, json={"query": count}).json()["rows"][0]["nodes"]
        assert nodes > 0
        for query in ("CREATE (n:Intruder {namespace: $namespace}) RETURN n",
                      "MATCH (d:Document {namespace: $namespace}) SET d.title = 'x'",
                      "MATCH (d:Document {namespace: $namespace}) DETACH DELETE d", "CALL dbms.listConfig()",
                      "LOAD CSV FROM 'file:///etc/passwd' AS line RETURN line"):  # fmt: skip
            error = error_of(client.post(path, json={"query": query}), 403)
            assert error["code"] == "query_refused" and "nothing was run or changed" in error["message"]
        assert client.post(path, json={"query": count}).json()["rows"][0]["nodes"] == nodes
        read = client.post(path, json={
            "query": "MATCH (d:Document {namespace: $namespace}) WHERE d.title STARTS WITH $p "
                     "RETURN d.title AS title ORDER BY title",
            "params": {"p": "H"}, "limit": 1, "timeout": 10**9,
        }).json()  # fmt: skip
        assert read["rows"] == [{"title": "Hank Snow"}] and read["truncated"] is True and read["limit"] == 1
        assert read["timeout"] == served.settings.cypher_max_timeout  # clamped, as in `engramdb cypher`


def test_a_scoped_token_reaches_only_its_namespaces(served: Served, corpus: str) -> None:
    other = f"other{uuid.uuid4().hex[:8]}"
    created = cli(served, "token", "create", "-n", corpus, "-n", f"spare{uuid.uuid4().hex[:6]}")
    assert created.exit_code == 0, created.output
    scoped = created.stdout.strip()
    with served.client() as admin:
        other_job = admin.post(f"/v1/namespaces/{other}/documents", json=["Lund is a city in Sweden."]).json()
        assert wait_for_job(admin, other_job["job_id"])["state"] == "done"
        other_stats = admin.get(f"/v1/namespaces/{other}/stats").json()
    with served.client(token=scoped) as client:  # accepted at once: the server rereads its token files
        assert client.get(f"/v1/namespaces/{corpus}/stats").json()["documents"] == len(CORPUS)
        answer = client.post(f"/v1/namespaces/{corpus}/ask", json={"question": ONE_HOP})
        assert answer.status_code == 200 and answer.json()["answer"].endswith("Tennessee")
        assert client.get("/v1/strategies").status_code == 200
        for method, path, body in (("GET", f"/v1/namespaces/{other}/stats", None),
                                   ("GET", f"/v1/namespaces/{other}/documents", None),
                                   ("POST", f"/v1/namespaces/{other}/ask", {"question": "Where is Lund?"}),
                                   ("POST", f"/v1/namespaces/{other}/documents", {"documents": ["Malmö is near."]}),
                                   ("DELETE", f"/v1/namespaces/{other}/documents", {"ids": ["x"]}),
                                   ("GET", f"/v1/jobs/{other_job['job_id']}", None),
                                   ("POST", f"/v1/namespaces/{other}/cypher", {"query": "RETURN 1 AS one"}),
                                   ("POST", f"/v1/namespaces/{corpus}/cypher", {"query": "RETURN 1 AS one"})):  # fmt: skip
            assert error_of(client.request(method, path, json=body), 403)["code"] == "forbidden", path
    with served.client() as admin:
        assert admin.get(f"/v1/namespaces/{other}/stats").json() == other_stats


# --------------------------------------------------------------------------- concurrency


def test_health_answers_while_asks_and_an_ingest_are_in_flight(served: Served, corpus: str) -> None:
    """Four times as many asks as workers, and an ingest job: /health neither queues behind them nor waits."""
    questions = [ONE_HOP, TWO_HOP, "Who released Hello Love?", "When was the journal established?",
                 "Where is the American Psychological Association headquartered?", "Where is Lake Tahoe?",
                 "Who was Hank Snow?", "When was Hello Love released?"] * 2  # fmt: skip
    workers = served.settings.server_workers
    assert len(questions) >= 4 * workers
    finished: list[float] = []
    failures: list[str] = []

    def ask(question: str, strategy: str) -> None:
        with served.client() as client:
            response = client.post(
                f"/v1/namespaces/{corpus}/ask", json={"question": question, "strategy": strategy}
            )
        if response.status_code != 200:
            failures.append(response.text)
        finished.append(time.monotonic())

    books = people(40)
    with served.client() as admin:
        job = admin.post(
            f"/v1/namespaces/busy{uuid.uuid4().hex[:8]}/documents", json={"documents": books}
        ).json()
    threads = [threading.Thread(target=ask, args=(q, ("chain", "hypergraph", "diffusion")[i % 3]))
               for i, q in enumerate(questions)]  # fmt: skip
    for thread in threads:
        thread.start()
    health: list[tuple[float, float, dict[str, Any], str]] = []  # (answered at, seconds, body, job state)
    with served.client(token=None, timeout=30) as client, served.client() as admin:
        while any(t.is_alive() for t in threads):
            t0 = time.monotonic()
            response = client.get("/health")
            answered = time.monotonic()
            state = admin.get(f"/v1/jobs/{job['job_id']}").json()["state"]
            health.append((answered, answered - t0, response.json(), state))
            time.sleep(0.05)
    for thread in threads:
        thread.join()
    assert not failures, failures

    def unfinished(at: float) -> int:
        return sum(done > at for done in finished)

    during = [h for h in health if unfinished(h[0]) > 0]
    assert during and all(
        body == {"status": "ok", "neo4j": True, "vectors": True} for _, _, body, _ in during
    )
    assert max(seconds for _, seconds, _, _ in during) < 2.5, [round(h[1], 2) for h in during]
    # answered while asks were waiting for a worker (more unfinished than workers) ...
    assert any(unfinished(at) > workers for at, _, _, _ in during), [unfinished(h[0]) for h in health]
    # ... and while the writer was busy with the ingest job
    assert any(state in ("queued", "running") for *_, state in health), [h[3] for h in health]
    with served.client() as admin:
        done = wait_for_job(admin, job["job_id"])
    assert done["state"] == "done" and done["report"]["ingested"] == len(books)


# --------------------------------------------------------------------------- starting, stopping, errors


def test_binding_beyond_loopback_needs_a_token_first(tmp_path: Path, neo4j_server, settings, driver) -> None:
    home_settings = private_settings(tmp_path / "home", neo4j_server, settings)
    env = {**os.environ, **cli_environment(home_settings, "default")}
    refused = subprocess.run([str(ENGRAMDB), "serve", "--host", "0.0.0.0", "--port", "0"], env=env,
                             capture_output=True, text=True, timeout=120)  # fmt: skip
    assert refused.returncode == 1
    assert (
        refused.stderr.startswith("error: refusing to listen on 0.0.0.0")
        and "engramdb token show" in refused.stderr
    )
    assert not (home_settings.home / "server" / "token").exists()

    shown = subprocess.run(
        [str(ENGRAMDB), "token", "show"], env=env, capture_output=True, text=True, timeout=120
    )
    assert shown.returncode == 0 and shown.stdout.strip().startswith("edb_")
    server = start_server(home_settings, tmp_path, "--host", "0.0.0.0")
    try:
        assert server.url.startswith("http://0.0.0.0:") and server.token == shown.stdout.strip()
        port = server.url.rsplit(":", 1)[1]
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            assert client.get("/health").json()["status"] == "ok"
            assert client.get("/v1/strategies").status_code == 401
    finally:
        assert server.stop() == 0


def test_a_busy_port_fails_the_start_with_one_error_line(served: Served, tmp_path: Path, neo4j_server, settings,
                                                         driver) -> None:  # fmt: skip
    port = served.url.rsplit(":", 1)[1]
    home_settings = private_settings(tmp_path / "home", neo4j_server, settings)
    env = {**os.environ, **cli_environment(home_settings, "default")}
    busy = subprocess.run([str(ENGRAMDB), "serve", "--port", port], env=env, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert busy.returncode == 1
    assert (
        busy.stderr.startswith(f"error: cannot listen on 127.0.0.1:{port}") and busy.stderr.count("\n") == 1
    )


def test_an_unexpected_error_is_a_json_500_without_traceback_and_logged_with_one(
    isolated_settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """In process: the app over a state whose stats fail the way a bug would."""
    from fastapi.testclient import TestClient

    from engramdb.platform.interfaces.server import ServerState, create_app
    from engramdb.platform.interfaces.server_tokens import ensure_admin_token

    token, _ = ensure_admin_token(isolated_settings.home)
    state = ServerState(isolated_settings)

    def broken(namespace: str) -> dict[str, Any]:
        raise RuntimeError("secret internals of " + namespace)

    state.stats = broken  # type: ignore[method-assign]
    try:
        client = TestClient(create_app(state), raise_server_exceptions=False)
        with caplog.at_level("ERROR", logger="engramdb.server"):
            response = client.get("/v1/namespaces/abc/stats", headers={"Authorization": f"Bearer {token}"})
        error = error_of(response, 500)
        assert error["code"] == "internal_error" and "secret" not in response.text
        reference = re.search(r"error ([0-9a-f]{12})", error["message"]).group(1)
        record = next(r for r in caplog.records if reference in r.getMessage())
        assert record.exc_info is not None and "secret internals of abc" in str(record.exc_info[1])
    finally:
        state.ask_pool.shutdown()
        state.health_pool.shutdown()


def test_a_second_server_on_the_same_home_is_refused_naming_the_first(served: Served) -> None:
    """The embedded vector store has one owner: the running server."""
    second = subprocess.run([str(ENGRAMDB), "serve", "--port", "0"], env=served.env, capture_output=True,
                            text=True, timeout=180)  # fmt: skip
    assert second.returncode == 1 and second.stderr.startswith("error: ")
    assert f"pid {served.process.pid}" in second.stderr and "engramdb serve" in second.stderr
    with served.client() as client:
        assert client.get("/health").json()["status"] == "ok"


def test_the_api_docs_are_served_and_say_that_cypher_sees_every_namespace(served: Served) -> None:
    with served.client(token=None) as client:
        docs = client.get("/docs")
        spec = client.get("/openapi.json").json()
    assert docs.status_code == 200 and "swagger" in docs.text.lower()
    cypher = spec["paths"]["/v1/namespaces/{namespace}/cypher"]["post"]
    assert "sees every namespace" in cypher["description"]
    assert any(s.get("scheme") == "bearer" for s in spec["components"]["securitySchemes"].values())
    assert set(spec["paths"]) >= {"/health", "/v1/strategies", "/v1/namespaces/{namespace}/ask",
                                  "/v1/namespaces/{namespace}/documents", "/v1/jobs/{job_id}",
                                  "/v1/namespaces/{namespace}/stats"}  # fmt: skip


def test_without_the_server_extra_serve_names_it_and_other_commands_never_load_it() -> None:
    hide = "import sys; sys.modules['fastapi'] = sys.modules['uvicorn'] = None; "
    run = "from engramdb.platform.interfaces.cli import main; main(['serve', '--port', '0'])"
    missing = subprocess.run([sys.executable, "-c", hide + run], capture_output=True, text=True, timeout=120)
    assert missing.returncode == 1
    assert missing.stderr.startswith("error: `engramdb serve` needs the server extra")
    assert "pip install 'engramdb[server]'" in missing.stderr
    probe = ("import sys; from click.testing import CliRunner; from engramdb.platform.interfaces.cli import main; "
             "CliRunner().invoke(main, ['config', 'show']); CliRunner().invoke(main, ['token', '--help']); "
             "print(sorted(m for m in ('fastapi', 'uvicorn', 'starlette') if m in sys.modules))")  # fmt: skip
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert loaded.returncode == 0 and loaded.stdout.strip() == "[]", loaded.stderr


def test_sigterm_stops_a_running_ingest_at_a_safe_point_and_the_next_ingest_resumes(
    tmp_path: Path, neo4j_server, settings, driver
) -> None:
    home_settings = private_settings(tmp_path / "home", neo4j_server, settings)
    namespace = f"resume{uuid.uuid4().hex[:8]}"
    documents = people(60)
    server = start_server(home_settings, tmp_path, ENGRAMDB_INGEST_BATCH_SIZE="4")
    try:
        with server.client() as client:
            job_id = client.post(
                f"/v1/namespaces/{namespace}/documents", json={"documents": documents}
            ).json()["job_id"]
            deadline = time.monotonic() + 300
            while (job := client.get(f"/v1/jobs/{job_id}").json())["documents_done"] < 8:
                assert job["state"] in ("queued", "running") and time.monotonic() < deadline, job
                time.sleep(0.05)
        assert job["state"] == "running"
        stopped_at = time.monotonic()
        assert server.stop() == 0
        assert time.monotonic() - stopped_at < 60  # the job stopped at its next batch, not at its end
        assert f"job {job_id} interrupted" in server.log_path.read_text()

        server = start_server(home_settings, tmp_path, ENGRAMDB_INGEST_BATCH_SIZE="4")
        with server.client() as client:
            job = ingest(client, namespace, documents)
            assert job["state"] == "done", job
            report = job["report"]
            assert report["skipped"] >= 8 and report["ingested"] + report["skipped"] == len(documents)
            stats = client.get(f"/v1/namespaces/{namespace}/stats").json()
            assert stats["documents_done"] == len(documents) and stats["documents_pending"] == 0
    finally:
        server.stop()


def test_health_is_degraded_when_a_store_fails_or_does_not_answer(isolated_settings: Settings) -> None:
    """In process: the probes' outcomes, including one that hangs past the probe timeout."""
    from fastapi.testclient import TestClient

    from engramdb.platform.interfaces.server import HEALTH_TIMEOUT, ServerState, create_app

    state = ServerState(isolated_settings)
    release = threading.Event()

    def down() -> bool:
        raise OSError("connection refused")

    def hangs() -> bool:
        release.wait(30)
        return True

    try:
        client = TestClient(create_app(state))
        state.neo4j_ok, state.vectors_ok = down, (lambda: True)  # type: ignore[method-assign]
        response = client.get("/health")
        assert response.status_code == 503
        assert response.json() == {"status": "degraded", "neo4j": False, "vectors": True}
        state.neo4j_ok, state.vectors_ok = (lambda: True), hangs  # type: ignore[method-assign]
        t0 = time.monotonic()
        response = client.get("/health")
        assert time.monotonic() - t0 < HEALTH_TIMEOUT + 2
        assert response.json() == {"status": "degraded", "neo4j": True, "vectors": False}
    finally:
        release.set()
        state.ask_pool.shutdown()
        state.health_pool.shutdown()


def test_sigkill_mid_ingest_the_restarted_server_reports_the_job_interrupted_and_the_resume_matches_a_clean_run(
    tmp_path: Path, neo4j_server, settings, driver
) -> None:
    """Job records live in Neo4j: a killed server's running job is found at the next start and marked
    interrupted; ingesting the same input again resumes it, ending where one clean run ends."""
    home_settings = private_settings(tmp_path / "home", neo4j_server, settings)
    namespace, clean = f"killed{uuid.uuid4().hex[:8]}", f"clean{uuid.uuid4().hex[:8]}"
    documents = people(60)
    server = start_server(home_settings, tmp_path, ENGRAMDB_INGEST_BATCH_SIZE="4")
    try:
        with server.client() as client:
            job_id = client.post(
                f"/v1/namespaces/{namespace}/documents", json={"documents": documents}
            ).json()["job_id"]
            deadline = time.monotonic() + 300
            while (job := client.get(f"/v1/jobs/{job_id}").json())["documents_done"] < 8:
                assert job["state"] in ("queued", "running") and time.monotonic() < deadline, job
                time.sleep(0.05)
        server.process.kill()
        server.process.wait(60)
        assert server.settings.home.joinpath("server", "server.json").exists()  # no clean exit: left behind

        server = start_server(home_settings, tmp_path, ENGRAMDB_INGEST_BATCH_SIZE="4")
        with server.client() as client:
            record = client.get(f"/v1/jobs/{job_id}").json()
            assert record["state"] == "failed" and record["error"].startswith("interrupted"), record
            # progress as last saved (at most once a second, at a document batch's end): possibly none yet
            assert record["namespace"] == namespace and 0 <= record["documents_done"] < len(documents)
            listed = client.get("/v1/jobs").json()["jobs"]
            assert [j["id"] for j in listed if j["id"] == job_id] == [job_id]
            pending = client.get(f"/v1/namespaces/{namespace}/stats").json()
            assert pending["documents_done"] + pending["documents_pending"] < len(documents) + 1
            job = ingest(client, namespace, documents)
            assert job["state"] == "done" and job["report"]["skipped"] >= 8, job
            assert ingest(client, clean, documents)["state"] == "done"
            resumed = client.get(f"/v1/namespaces/{namespace}/stats").json()
            reference = client.get(f"/v1/namespaces/{clean}/stats").json()
            assert client.get(f"/v1/jobs/{job['id']}").json()["state"] == "done"
        for key in ("namespace",):
            resumed.pop(key), reference.pop(key)
        assert resumed == reference
        assert resumed["documents_done"] == len(documents) and resumed["documents_pending"] == 0
    finally:
        server.stop()

    # The records outlive the server: a new one answers for the finished job too.
    server = start_server(home_settings, tmp_path)
    try:
        with server.client() as client:
            assert client.get(f"/v1/jobs/{job['id']}").json()["report"]["documents"] == len(documents)
            assert client.get("/v1/jobs/no-such-job").status_code == 404
    finally:
        server.stop()


def _entity_difference(driver: Any, first: str, second: str) -> dict[str, list]:
    """Entities (id, name, types, aliases) one namespace holds and the other does not: what a failed
    comparison of two memories should show."""
    query = "MATCH (e:Entity {namespace: $ns}) RETURN e.id AS id, e.name AS name, e.types AS types, e.aliases AS aliases"
    rows = {ns: {(r["id"], r["name"], str(r["types"]), str(r["aliases"])) for r in driver.execute_query(query, ns=ns)[0]}
            for ns in (first, second)}  # fmt: skip
    return {
        f"only in {first}": sorted(rows[first] - rows[second]),
        f"only in {second}": sorted(rows[second] - rows[first]),
    }


def test_two_servers_on_one_neo4j_given_the_same_input_at_once_each_write_a_document_exactly_once(
    tmp_path: Path, neo4j_server, settings, driver
) -> None:
    """Several servers behind a load balancer share one Neo4j: each document is claimed in one
    transaction, so of two servers handed the same input at the same moment exactly one extracts
    and writes each document, and the other waits for it and finds it done. Each server here has
    its own data home (its own embedded vector store), so the vectors are split between them."""
    shared, clean = f"two{uuid.uuid4().hex[:8]}", f"one{uuid.uuid4().hex[:8]}"
    documents = teachers(24)
    servers = [start_server(private_settings(tmp_path / f"home{i}", neo4j_server, settings), tmp_path / f"w{i}",
                            ENGRAMDB_INGEST_BATCH_SIZE="2") for i in range(2)]  # fmt: skip
    try:
        clients = [server.client() for server in servers]
        for i, client in enumerate(clients):  # models loaded in both before the race
            assert ingest(client, f"warm{i}{uuid.uuid4().hex[:6]}", people(1))["state"] == "done"
        start = threading.Barrier(2)
        jobs: list[dict[str, Any]] = [{}, {}]

        def run(i: int) -> None:
            start.wait()
            jobs[i] = ingest(clients[i], shared, documents)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(600)
        reports = [job["report"] for job in jobs]
        assert [job["state"] for job in jobs] == ["done", "done"], jobs
        # every document was written by exactly one of the two; the other found it done
        assert sum(r["ingested"] for r in reports) == len(documents), reports
        for mine, theirs in (reports, reports[::-1]):
            assert mine["ingested_elsewhere"] == theirs["ingested"], reports
        writers, _, _ = driver.execute_query(
            "MATCH (d:Document {namespace: $ns}) RETURN d.id AS id, d.status AS status, d.ingested_by AS by, "
            "d.claimed_by AS claim", ns=shared)  # fmt: skip
        assert len(writers) == len(documents) and {r["status"] for r in writers} == {"done"}
        assert all(r["claim"] is None for r in writers)  # every claim released with the status
        by_pid = {server.process.pid: 0 for server in servers}
        for record in writers:
            by_pid[int(record["by"].split("/")[1])] += 1
        assert list(by_pid.values()) == [r["ingested"] for r in reports]
        assert all(count > 0 for count in by_pid.values()), by_pid  # both really took part

        # one consistent copy: the graph equals one server's clean ingest of the same input,
        # and the two homes' vectors together are that run's vectors
        assert ingest(clients[0], clean, documents)["report"]["ingested"] == len(documents)
        split = [client.get(f"/v1/namespaces/{shared}/stats").json() for client in clients]
        alone = clients[0].get(f"/v1/namespaces/{clean}/stats").json()
        graph_keys = ("documents", "documents_done", "chunks", "entities", "verb_phrases", "qa_pairs", "qa_edges",
                      "gists", "has_chunk_edges", "mentions_edges", "has_verb_phrase_edges", "role_in_edges")  # fmt: skip
        assert {k: split[0][k] for k in graph_keys} == {k: alone[k] for k in graph_keys}, _entity_difference(
            driver, shared, clean
        )
        for key in ("qa_vectors", "chunk_vectors"):
            assert split[0][key] + split[1][key] == alone[key], (key, split, alone)
        for client in clients:
            client.close()
    finally:
        for server in servers:
            server.stop()

"""Operator-facing CLI and SDK behaviour: listing documents, all-or-none delete, namespace
options in either place, the empty-namespace hint, and unreachable stores reported in one line.

Everything runs against the session's real Neo4j (as a configured server); a lost
connection is produced for real, by a closed port or by cutting a TCP relay.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from neo4j import GraphDatabase
from neo4j.exceptions import CypherSyntaxError, ServiceUnavailable, SessionExpired

from engramdb.ingestion.documents import make_document
from engramdb.ingestion.extraction.llm import LLMExtractor
from engramdb.ingestion.pipeline import Ingestor
from engramdb.platform.errors import EngramError, InputError, unreachable_store
from engramdb.platform.graph import DRIVER_OPTIONS, Graph
from engramdb.platform.interfaces.cli import friendly_errors, main
from engramdb.platform.interfaces.memory import Memory

CURIE = {
    "id": "curie",
    "title": "Marie Curie",
    "text": "Marie Curie was born in Warsaw. She won the Nobel Prize.",
}
OSLO = {"id": "oslo", "title": "Oslo", "text": "Oslo is the capital of Norway."}


def run(env: dict[str, str], *args: str, input: str | None = None):
    return CliRunner().invoke(main, list(args), env=env, input=input, catch_exceptions=False)


def ingest(env: dict[str, str], *docs: dict, namespace_args: tuple[str, ...] = ()) -> None:
    result = run(env, "ingest", "-", *namespace_args, input=json.dumps(list(docs)))
    assert result.exit_code == 0, result.output


def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def fresh_namespace() -> str:
    """A namespace that sorts before the suite's t<hex> namespaces, so hints list it first."""
    return f"0ops{uuid.uuid4().hex[:10]}"


# ------------------------------------------------------------------ documents


def test_documents_lists_status_counts_and_failure_reasons(cli_env, memory: Memory) -> None:
    ingest(cli_env, CURIE, OSLO)
    bad = make_document("Brand is a play by Henrik Ibsen.", title="Brand [draft]", id="brand")
    failing = LLMExtractor(FakeListChatModel(responses=["not json at all", "not json at all"]),
                           namespace=memory.namespace, concurrency=1)  # fmt: skip
    report = Ingestor(memory.graph, memory.vectors, memory.embedder, failing).ingest([bad])
    assert report.failed == 1

    listed = json.loads(run(cli_env, "documents", "--json").stdout)
    assert [d["id"] for d in listed] == ["brand", "curie", "oslo"]
    by_id = {d["id"]: d for d in listed}
    assert (
        by_id["curie"]["status"] == "done"
        and by_id["curie"]["chunks"] == 1
        and by_id["curie"]["qa_pairs"] > 0
    )
    assert by_id["curie"]["error"] is None
    assert by_id["brand"]["status"] == "failed" and by_id["brand"]["error"] == memory.document_status(["brand"])[
        "brand"]["error"]  # fmt: skip
    reason = by_id["brand"]["error"]
    assert len(reason) > 60  # long enough that the table must cut it

    wide = {**cli_env, "COLUMNS": "200"}  # room for every column, so what is cut is the reason alone
    failed = run(wide, "documents", "--status", "failed")
    assert failed.exit_code == 0
    assert "brand" in failed.output and "Brand [draft]" in failed.output and "curie" not in failed.output
    assert reason[:40] in failed.output and reason not in failed.output.replace("\n", "")

    limited = run(wide, "documents", "--limit", "1")
    assert (
        "brand" in limited.output
        and "oslo" not in limited.output
        and "1 of 3 documents shown" in limited.output
    )
    assert run(cli_env, "documents", "--status", "lost").exit_code == 2  # click names the valid choices

    sdk = memory.documents(status="done")
    assert [d["id"] for d in sdk] == ["curie", "oslo"]
    assert sdk == [d for d in listed if d["status"] == "done"]
    assert memory.documents(limit=2) == listed[:2] and memory.documents(limit=0) == []
    with pytest.raises(InputError, match="unknown document status 'lost'"):
        memory.documents(status="lost")


def test_documents_counts_a_pending_document_from_the_graph(cli_env, memory: Memory, driver) -> None:
    """A document an interrupted ingest left pending has no stored counts yet: they come from the graph."""
    ingest(cli_env, CURIE)
    done = memory.documents()[0]
    driver.execute_query(
        "MATCH (d:Document {namespace: $ns, id: 'curie'}) SET d.status = 'pending' REMOVE d.chunk_count, d.qa_count",
        ns=memory.namespace,
    )
    pending = memory.documents(status="pending")
    assert pending == [{**done, "status": "pending"}]


def test_stats_groups_nodes_edges_vectors_and_document_status(cli_env, memory: Memory) -> None:
    ingest(cli_env, CURIE, OSLO)
    data = json.loads(run(cli_env, "stats", "--json").stdout)
    assert data["documents"] == data["documents_done"] == 2 and data["has_chunk_edges"] == data["chunks"] == 2
    assert data["has_verb_phrase_edges"] == data["verb_phrases"] > 0
    assert data["mentions_edges"] >= data["entities"] > 0 and data["role_in_edges"] > 0
    assert data["entity_vectors"] == data["entities"] and data["qa_vectors"] == data["qa_pairs"]
    assert data == {**memory.stats(), "namespace": memory.namespace}

    table = run(cli_env, "stats").output
    for group in ("nodes", "edges", "vectors", "documents"):
        assert group in table
    for label in ("HAS_CHUNK", "MENTIONS", "ROLE_IN", "entity names", "pending", "failed"):
        assert label in table


# ------------------------------------------------------------------ delete


def test_delete_is_all_or_none_and_names_every_missing_id(cli_env, memory: Memory) -> None:
    ingest(cli_env, CURIE, OSLO)
    result = run(cli_env, "delete", "curie", "nope-1", "oslo", "nope-2")
    assert result.exit_code == 1
    assert "'nope-1', 'nope-2'" in result.output and "none of the 4 documents was deleted" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert [d["id"] for d in memory.documents()] == ["curie", "oslo"]

    both = run(cli_env, "delete", "curie", "oslo")
    assert both.exit_code == 0 and "deleted curie" in both.output and "deleted oslo" in both.output
    assert memory.documents() == [] and memory.stats()["entities"] == 0


def test_sdk_delete_many_is_all_or_none(cli_env, memory: Memory) -> None:
    ingest(cli_env, CURIE, OSLO)
    with pytest.raises(InputError, match=r"no document 'ghost' .*none of the 2 documents was deleted"):
        memory.delete_many(["curie", "ghost"])
    assert len(memory.documents()) == 2
    assert [r.doc_id for r in memory.delete_many(["oslo", "oslo"])] == ["oslo"]
    assert memory.delete("curie").doc_id == "curie"
    assert memory.documents() == [] and memory.delete_many([]) == []
    with pytest.raises(InputError, match="no document 'curie' in namespace"):
        memory.delete("curie")


# ------------------------------------------------------------------ namespace options


def test_namespace_and_home_options_work_after_the_subcommand(cli_env, tmp_path: Path) -> None:
    env = {k: v for k, v in cli_env.items() if k != "ENGRAMDB_NAMESPACE"}
    ns, other = fresh_namespace(), fresh_namespace()
    ingest(env, CURIE, namespace_args=("-n", ns))

    asked = run(
        env, "-n", ns, "ask", "-n", other, "Where was Marie Curie born?"
    )  # reaches the namespace check
    assert asked.exit_code == 1 and f"namespace '{other}' holds no documents" in asked.output
    assert json.loads(run(env, "stats", "--namespace", ns, "--json").stdout)["documents"] == 1
    assert (
        json.loads(run(env, "-n", other, "stats", "-n", ns, "--json").stdout)["documents"] == 1
    )  # subcommand wins
    assert json.loads(run(env, "-n", ns, "stats", "--json").stdout)["documents"] == 1  # before still works
    assert [d["id"] for d in json.loads(run(env, "documents", "-n", ns, "--json").stdout)] == ["curie"]
    assert run(env, "delete", "curie", "-n", other).exit_code == 1  # the other namespace has no such document

    home = tmp_path / "elsewhere"
    shown = json.loads(run(env, "config", "show", "--home", str(home), "-n", ns, "--json").stdout)
    assert shown["home"] == str(home) and shown["namespace"] == ns
    assert json.loads(run(env, "--home", "/x", "config", "show", "--home", str(home), "--json").stdout)[
        "home"
    ] == str(home)
    assert run(env, "stats", "-n", "bad name!").exit_code == 1


def test_empty_namespace_names_the_namespaces_that_hold_documents(cli_env) -> None:
    env = {k: v for k, v in cli_env.items() if k != "ENGRAMDB_NAMESPACE"}
    full, empty = fresh_namespace(), fresh_namespace()
    ingest(env, CURIE, OSLO, namespace_args=("-n", full))

    asked = run(env, "ask", "-n", empty, "Where was Marie Curie born?")
    assert asked.exit_code == 1
    lines = asked.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert f"namespace '{empty}' holds no documents; namespaces with documents:" in lines[0]
    assert f"{full} (2)" in lines[0] and f"{empty} (" not in lines[0]

    stats = run(env, "stats", "-n", empty)
    assert stats.exit_code == 0 and f"{full} (2)" in stats.output and "holds no documents" in stats.output
    quiet = run(env, "stats", "-n", empty, "--json")
    assert json.loads(quiet.output)["documents"] == 0  # JSON output carries no hint text
    listing = run(env, "documents", "-n", empty)
    assert listing.exit_code == 0 and f"{full} (2)" in listing.output

    with Memory(namespace=empty, settings=_settings(env)) as memory:
        others = memory.other_namespaces()
    assert others[full] == 2 and empty not in others


def _settings(env: dict[str, str]):
    from pydantic import SecretStr

    from engramdb.platform.config import Settings

    return Settings(home=Path(env["ENGRAMDB_HOME"]), neo4j_uri=env["ENGRAMDB_NEO4J_URI"],
                    neo4j_password=SecretStr(env["ENGRAMDB_NEO4J_PASSWORD"]))  # fmt: skip


# ------------------------------------------------------------------ unreachable stores


@pytest.mark.parametrize(
    ("args", "stdin", "resume"),
    [
        (("stats",), None, False),
        (("documents",), None, False),
        (("ask", "Where was Marie Curie born?"), None, False),
        (("delete", "curie"), None, False),
        (("ingest", "-"), json.dumps([CURIE]), True),
    ],
)
def test_unreachable_neo4j_is_one_error_line(cli_env, args, stdin, resume) -> None:
    uri = f"bolt://127.0.0.1:{closed_port()}"
    result = run({**cli_env, "ENGRAMDB_NEO4J_URI": uri}, *args, input=stdin)
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.output
    assert lines[0].startswith(f"error: Neo4j at {uri} is not reachable (Connection refused)")
    assert ("rerun the ingest to resume" in lines[0]) == resume


def test_unreachable_neo4j_in_a_real_process_prints_one_line(cli_env, tmp_path: Path) -> None:
    uri = f"bolt://127.0.0.1:{closed_port()}"
    env = {**os.environ, **cli_env, "ENGRAMDB_NEO4J_URI": uri}
    done = subprocess.run([sys.executable, "-m", "engramdb.platform.interfaces.cli", "documents"], env=env,
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)  # fmt: skip
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"error: Neo4j at {uri} is not reachable")


def test_unreachable_qdrant_server_is_one_error_line(cli_env) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    result = run({**cli_env, "ENGRAMDB_QDRANT_URL": url}, "stats")
    assert result.exit_code == 1 and "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert errors == [f"error: Qdrant at {url} is not reachable (Connection refused); "
                      "is the server up and ENGRAMDB_QDRANT_URL right?"]  # fmt: skip


class TcpRelay:
    """Forwards a local port to Neo4j until ``cut()`` drops every connection: a server that goes away."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = []
        self.is_cut = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.is_cut.is_set():
                client.close()
                return
            upstream = socket.create_connection(self.target)
            self.sockets += [client, upstream]
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(src, dst), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass

    def cut(self) -> None:
        self.is_cut.set()
        for sock in (self.listener, *self.sockets):  # shutdown wakes the thread blocked in accept()
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()


def test_connection_lost_mid_session_maps_to_one_line(neo4j_server, namespace: str) -> None:
    host, port = neo4j_server.bolt_uri.removeprefix("bolt://").split(":")
    relay = TcpRelay((host, int(port)))
    uri = f"bolt://127.0.0.1:{relay.port}"
    driver = GraphDatabase.driver(uri, auth=("neo4j", neo4j_server.password()), max_transaction_retry_time=0.5,
                                  **DRIVER_OPTIONS)  # fmt: skip
    graph = Graph(driver, namespace)
    try:
        assert graph.read("traversals/namespace_counts")[0]["documents"] == 0
        relay.cut()
        with pytest.raises(Exception) as lost:  # noqa: PT011 - whichever error the driver picks
            graph.read("traversals/namespace_counts")
        assert isinstance(lost.value, ServiceUnavailable | SessionExpired)
        assert unreachable_store(lost.value) == "neo4j"

        @click.command()
        @friendly_errors
        def counts() -> None:
            graph.read("traversals/namespace_counts")

        result = CliRunner().invoke(counts, [], env={"ENGRAMDB_NEO4J_URI": uri, "ENGRAMDB_CONFIG": "none"},
                                    catch_exceptions=False)  # fmt: skip
        assert result.exit_code == 1 and "Traceback" not in result.output
        assert result.output.startswith(f"error: Neo4j at {uri} is not reachable")
        assert result.output.count("\n") == 1
    finally:
        relay.cut()
        driver.close()


def test_error_mapping_recognises_lost_stores_only() -> None:
    from qdrant_client.http.exceptions import ResponseHandlingException

    assert unreachable_store(ServiceUnavailable("gone")) == "neo4j"
    assert unreachable_store(SessionExpired("expired")) == "neo4j"
    try:
        try:
            raise ServiceUnavailable("refused")
        except ServiceUnavailable as exc:
            raise EngramError("cannot reach Neo4j") from exc
    except EngramError as wrapped:
        assert unreachable_store(wrapped) == "neo4j"
    assert unreachable_store(ResponseHandlingException(ConnectionRefusedError(111, "refused"))) == "vectors"
    assert unreachable_store(CypherSyntaxError("bad query")) is None
    assert unreachable_store(InputError("bad input")) is None
    assert unreachable_store(ConnectionRefusedError(111, "an LLM API, not a store")) is None

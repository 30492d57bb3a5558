"""MCP: the tools and document resources through the official SDK's own client.

Over streamable HTTP against a real ``engramdb serve`` (started as
tests/test_server.py starts it) and over stdio against a real ``engramdb mcp``
subprocess, both through a running server and owning the store itself. Every
process started here is stopped by the test or fixture that started it (the
stdio server ends when its client closes the pipe).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from engramdb.platform.config import Settings
from engramdb.platform.interfaces.memory import Memory
from engramdb.platform.interfaces.server_discovery import server_file
from tests.conftest import cli_environment, private_settings
from tests.test_server import CORPUS, ONE_HOP, Served, start_server

ENGRAMDB = Path(sys.executable).parent / "engramdb"
TOOLS = {"ask", "remember", "list_documents", "forget", "query_graph"}
NOTE = (
    "Ada Quill was born in Lowmere. Ada Quill founded the Lowmere Lantern Works in 1881. "
    "The Lantern Works made brass lamps for ships."
)


# --------------------------------------------------------------------------- helpers


@asynccontextmanager
async def http_session(url: str, token: str | None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=300) as http:
        async with streamable_http_client(f"{url}/mcp", http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                yield session


@asynccontextmanager
async def stdio_session(env: dict[str, str], stderr_path: Path) -> AsyncIterator[ClientSession]:
    """``engramdb mcp`` as a subprocess (the SDK's stdio client spawns it and ends it on exit)."""
    params = StdioServerParameters(command=str(ENGRAMDB), args=["mcp"], env=env)
    with open(stderr_path, "a") as errlog:
        async with stdio_client(params, errlog=errlog) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                yield session


def run(session_factory: Callable[[], Any], scenario: Callable[[ClientSession], Awaitable[Any]]) -> Any:
    """Run ``scenario(session)`` to its end on a fresh event loop (the tests are synchronous)."""

    async def main() -> Any:
        async with session_factory() as session:
            return await scenario(session)

    return anyio.run(main)


async def call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    """A tool's structured reply; the call must succeed."""
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def refused(session: ClientSession, tool: str, **arguments: Any) -> str:
    """The error text of a tool call that must fail."""
    result = await session.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    return result.content[0].text


def stats(served: Served, namespace: str) -> dict[str, Any]:
    with served.client() as client:
        response = client.get(f"/v1/namespaces/{namespace}/stats")
    assert response.status_code == 200, response.text
    return response.json()


async def remember_ask_list_read_forget(session: ClientSession, namespace: str) -> dict[str, Any]:
    """The agent's round trip; returns what each step gave."""
    out: dict[str, Any] = {}
    tools = (await session.list_tools()).tools
    out["tools"] = {t.name: t for t in tools}
    out["remember"] = await call(session, "remember", text=NOTE, title="Ada Quill", namespace=namespace)
    out["again"] = await call(session, "remember", text=NOTE, title="Ada Quill", namespace=namespace)
    out["ask"] = await call(
        session, "ask", question="Who founded the Lowmere Lantern Works?", namespace=namespace
    )
    out["listed"] = await call(session, "list_documents", namespace=namespace)
    uri = out["remember"]["uri"]
    out["read"] = (await session.read_resource(uri)).contents[0].text
    out["graph"] = await call(
        session, "query_graph", namespace=namespace,
        query="MATCH (d:Document {namespace: $namespace}) RETURN d.title AS title",
    )  # fmt: skip
    out["write_refused"] = await refused(session, "query_graph", namespace=namespace,
                                         query="CREATE (n:Intruder) RETURN n")  # fmt: skip
    out["unknown_forget"] = await refused(session, "forget", ids=[out["remember"]["id"], "no-such-doc"],
                                          namespace=namespace)  # fmt: skip
    out["after_refusal"] = await call(session, "list_documents", namespace=namespace)
    out["forget"] = await call(session, "forget", ids=[out["remember"]["id"]], namespace=namespace)
    out["after"] = await call(session, "list_documents", namespace=namespace)
    out["ask_empty"] = await refused(session, "ask", question="Who?", namespace=namespace)
    out["bad_strategy"] = await refused(
        session, "ask", question="Who?", strategy="psychic", namespace=namespace
    )
    return out


def check_round_trip(out: dict[str, Any]) -> None:
    assert set(out["tools"]) == TOOLS
    for tool in out["tools"].values():
        assert len(tool.description or "") > 150, tool.name  # enough to act on without our README
    assert out["tools"]["query_graph"].annotations.read_only_hint is True
    assert out["tools"]["forget"].annotations.destructive_hint is True
    remembered = out["remember"]
    assert remembered["result"] == "ingested" and remembered["qa_pairs"] > 0 and remembered["passages"] == 1
    assert out["again"]["result"] == "unchanged" and out["again"]["id"] == remembered["id"]
    ask = out["ask"]
    assert ask["supported"] is True and "Ada Quill" in ask["answer"], ask
    assert ask["evidence"] and ask["evidence"][0]["doc_id"] == remembered["id"]
    assert ask["evidence"][0]["uri"] == remembered["uri"]
    listed = out["listed"]
    assert listed["total"] == 1 and [d["id"] for d in listed["documents"]] == [remembered["id"]]
    assert listed["documents"][0]["status"] == "done" and listed["documents"][0]["uri"] == remembered["uri"]
    assert out["read"].startswith("# Ada Quill\n") and "brass lamps" in out["read"]
    assert out["graph"]["rows"] == [{"title": "Ada Quill"}]
    assert "CREATE" in out["write_refused"] and "nothing was run" in out["write_refused"]
    assert (
        "no-such-doc" in out["unknown_forget"]
        and "none of the 2 documents was deleted" in out["unknown_forget"]
    )
    assert out["after_refusal"]["total"] == 1  # all or none: the known id was kept too
    assert out["forget"]["deleted"] == [remembered["id"]]
    assert out["after"]["total"] == 0 and out["after"]["documents"] == []
    assert "holds no documents" in out["ask_empty"] and "remember" in out["ask_empty"]
    assert "unknown strategy 'psychic'" in out["bad_strategy"] and "chain" in out["bad_strategy"]


# --------------------------------------------------------------------------- over HTTP


@pytest.fixture(scope="module")
def served(tmp_path_factory, neo4j_server, settings, driver) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("mcp-server")
    server = start_server(private_settings(root / "home", neo4j_server, settings), root)
    try:
        yield server
    finally:
        server.stop()


def test_the_tools_over_streamable_http_on_the_server(served: Served) -> None:
    namespace = f"mcp{uuid.uuid4().hex[:10]}"
    out = run(lambda: http_session(served.url, served.token),
              lambda s: remember_ask_list_read_forget(s, namespace))  # fmt: skip
    check_round_trip(out)
    counts = stats(served, namespace)  # the forgotten document left nothing behind
    assert counts["documents"] == 0 and counts["qa_vectors"] == 0 and counts["chunk_vectors"] == 0


def test_the_mcp_endpoint_needs_a_token_and_a_scoped_token_keeps_to_its_namespaces(served: Served) -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "t", "version": "0"}}}  # fmt: skip
    accept = {"Accept": "application/json, text/event-stream"}
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        response = httpx.post(f"{served.url}/mcp", json=initialize, headers={**accept, **headers}, timeout=30)
        assert response.status_code == 401 and response.json()["error"]["code"] == "unauthorized"

    mine, theirs = f"mine{uuid.uuid4().hex[:8]}", f"theirs{uuid.uuid4().hex[:8]}"
    with served.client() as admin:
        posted = admin.post(f"/v1/namespaces/{theirs}/documents", json={"documents": CORPUS[:1]})
        assert posted.status_code == 202
    created = subprocess.run([str(ENGRAMDB), "token", "create", "--namespace", mine], env=served.env,
                             capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
    scoped = created.stdout.strip()

    async def scenario(session: ClientSession) -> dict[str, Any]:
        return {
            "own": await call(session, "list_documents", namespace=mine),
            "other": await refused(session, "list_documents", namespace=theirs),
            "other_ask": await refused(session, "ask", question=ONE_HOP, namespace=theirs),
            "other_forget": await refused(session, "forget", ids=[CORPUS[0]["title"]], namespace=theirs),
            "graph": await refused(session, "query_graph", query="MATCH (n) RETURN count(n)", namespace=mine),
            "remember": await call(session, "remember", text=NOTE, title="Ada Quill", namespace=mine),
            # resources/list names the default namespace's documents, which this token may not see
            "resources": (await session.list_resources()).resources,
        }

    out = run(lambda: http_session(served.url, scoped), scenario)
    assert out["own"]["total"] == 0
    for key in ("other", "other_ask", "other_forget"):
        assert f"may not use namespace {theirs!r}" in out[key]
    assert "admin token" in out["graph"]
    assert out["remember"]["result"] == "ingested" and out["resources"] == []
    assert stats(served, mine)["documents_done"] == 1


# --------------------------------------------------------------------------- over stdio


def test_engramdb_mcp_over_stdio_goes_through_the_running_server(served: Served, tmp_path: Path) -> None:
    """With a server up for the home, `engramdb mcp` must not open the store (the server holds it)."""
    assert json.loads(server_file(served.settings.home).read_text())["url"] == served.url
    namespace = f"stdio{uuid.uuid4().hex[:8]}"
    env = {**cli_environment(served.settings, namespace)}
    out = run(lambda: stdio_session(env, tmp_path / "mcp.stderr"),
              lambda s: remember_ask_list_read_forget(s, namespace))  # fmt: skip
    check_round_trip(out)
    log = served.log_path.read_text()
    assert f'"GET /v1/namespaces/{namespace}/documents?' in log  # list_documents went over REST
    assert f'"POST /v1/namespaces/{namespace}/ask' in log


def test_engramdb_mcp_over_stdio_owns_the_store_when_no_server_runs(
    tmp_path: Path, neo4j_server, settings: Settings, driver
) -> None:
    """No server: the subprocess opens the store itself; a record left by a dead server is ignored and
    removed; the default namespace (-n / ENGRAMDB_NAMESPACE) lists its documents as resources."""
    own = private_settings(tmp_path / "home", neo4j_server, settings)
    namespace = f"local{uuid.uuid4().hex[:8]}"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait(30)
    record = server_file(own.home)
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"url": "http://127.0.0.1:9", "pid": dead.pid}))

    async def scenario(session: ClientSession) -> dict[str, Any]:
        out = await remember_ask_list_read_forget(session, namespace)
        kept = await call(session, "remember", text=NOTE, title="Ada Quill", namespace=namespace)
        out["kept"] = kept
        out["resources"] = (await session.list_resources()).resources
        return out

    out = run(lambda: stdio_session(cli_environment(own, namespace), tmp_path / "mcp.stderr"), scenario)
    check_round_trip(out)
    assert not record.exists()
    assert [(str(r.uri), r.name) for r in out["resources"]] == [(out["kept"]["uri"], out["kept"]["id"])]
    # The subprocess released the store when its client closed the pipe: this process can open it.
    with Memory(namespace, own) as memory:
        assert [d["id"] for d in memory.documents()] == [out["kept"]["id"]]
    assert os.environ.get("ENGRAMDB_SERVER_URL") is None

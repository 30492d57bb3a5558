"""The MCP tools of ``mcp_tools.py`` mounted on ``engramdb serve`` at ``/mcp`` (streamable HTTP).

Why through the server's own state and not its REST routes: the tools then
share the server's pools and its one writer (an agent's ``remember`` queues
behind a running ingest job like any other write), and the caller's token,
checked by the server's Guard before the SDK sees the request, travels with
each call: a namespace-scoped token reaches only its namespaces and never
``query_graph``, exactly as on the REST API.

Stateless mode with JSON replies: each POST carries one complete exchange, so
no session outlives a request and several servers could answer the same
client (see the README's multi-server notes).
"""

import asyncio
from typing import Any

from starlette.routing import Route

from engramdb.platform.config import validate_namespace
from engramdb.platform.errors import EngramError, InputError
from engramdb.platform.interfaces.mcp_tools import build_mcp, empty_namespace
from engramdb.platform.interfaces.server import (
    ApiError,
    AskRequest,
    CypherRequest,
    ServerState,
    _on_writer,
    classify,
    in_pool,
    log,
)
from engramdb.platform.interfaces.server_tokens import Principal

try:
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
    from mcp.server.transport_security import TransportSecuritySettings
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    from engramdb.platform.errors import ConfigError

    raise ConfigError(f"the MCP endpoint needs the server extra ({exc.name} is missing)") from exc

MCP_PATH = "/mcp"
#: Seconds between looks at a ``remember`` job's state.
JOB_POLL_SECONDS = 0.2


class ServerBackend:
    """The tools' work on the server's state, on behalf of one caller (``principal``)."""

    def __init__(self, state: ServerState, principal: Principal) -> None:
        self.state = state
        self.principal = principal
        self.default_namespace = state.settings.namespace

    def _allowed(self, namespace: str) -> str:
        try:
            validate_namespace(namespace)
        except ValueError as exc:
            raise InputError(str(exc)) from exc
        if not self.principal.may_use(namespace):
            raise EngramError(f"this token may not use namespace {namespace!r}")
        return namespace

    async def _call(self, work: Any) -> Any:
        """Await ``work``; the server's own errors become EngramErrors carrying the REST API's message."""
        try:
            return await work
        except EngramError:
            raise
        except Exception as exc:
            status, code, message = classify(exc)
            if status >= 500:
                log.error("MCP call failed (%s)", code, exc_info=exc)
            raise (InputError(message) if status < 500 else EngramError(message)) from exc

    async def ask(self, namespace: str, question: str, strategy: str, budget: int | None) -> dict[str, Any]:
        request = AskRequest(question=question, strategy=strategy, budget=budget)
        ns = self._allowed(namespace)
        try:
            return await in_pool(self.state.ask_pool, self.state.ask, ns, request)  # type: ignore[no-any-return]
        except ApiError as exc:
            if exc.code == "empty_namespace":  # the REST wording names a route an agent cannot call
                raise InputError(empty_namespace(ns)) from exc
            raise InputError(exc.message) if exc.status < 500 else EngramError(exc.message) from exc
        except Exception as exc:
            return await self._call(_reraise(exc))  # type: ignore[no-any-return]

    async def remember(self, namespace: str, document: dict[str, Any]) -> dict[str, Any]:
        from engramdb.ingestion.documents import make_document

        ns = self._allowed(namespace)
        doc = make_document(document["text"], title=document.get("title"), id=document.get("id"))
        memory = await self._call(in_pool(self.state.ask_pool, self.state.memory, ns))
        job = self.state.writer.submit_ingest(memory, [doc])
        while True:  # the job runs on the writer whether or not this caller waits for it
            record = self.state.writer.job(job.id, stored=False)
            if record is None or record["state"] in ("done", "failed"):
                break
            await asyncio.sleep(JOB_POLL_SECONDS)
        if record is None or record["state"] == "failed":
            raise EngramError(f"remembering failed: {(record or {}).get('error') or 'the job was lost'}")
        return record["report"]  # type: ignore[no-any-return]

    async def documents(self, namespace: str, status: str | None, limit: int, offset: int) -> dict[str, Any]:
        ns = self._allowed(namespace)
        return await self._call(in_pool(self.state.ask_pool, self.state.documents, ns, status, limit, offset))  # type: ignore[no-any-return]

    async def forget(self, namespace: str, ids: list[str]) -> list[dict[str, Any]]:
        ns = self._allowed(namespace)
        answer = await self._call(_on_writer(self.state, lambda: self.state.delete(ns, ids)))
        return list(answer["deleted"])

    async def query_graph(
        self, namespace: str, query: str, params: dict[str, Any], limit: int
    ) -> dict[str, Any]:
        ns = self._allowed(namespace)
        if not self.principal.is_admin:
            raise EngramError("query_graph reads every namespace, so it needs the admin token; this token is "
                              "limited to namespaces")  # fmt: skip
        request = CypherRequest(query=query, params=params, limit=limit)
        return await self._call(in_pool(self.state.ask_pool, self.state.cypher, ns, request))  # type: ignore[no-any-return]

    async def document(self, namespace: str, doc_id: str) -> dict[str, Any] | None:
        ns = self._allowed(namespace)
        return await self._call(in_pool(self.state.ask_pool, lambda: self.state.memory(ns).document(doc_id)))  # type: ignore[no-any-return]


async def _reraise(exc: BaseException) -> Any:
    raise exc


def principal_of(ctx: Context) -> Principal:
    """The caller the Guard authenticated for the HTTP request carrying this MCP message."""
    request = ctx.request_context.request
    found = getattr(request, "scope", {}).get("state", {}).get("principal") if request is not None else None
    if not isinstance(found, Principal):  # the Guard lets no /mcp request through without one
        raise EngramError("missing or unknown token")
    return found


def mount_mcp(routes: list[Any], state: ServerState) -> MCPServer:
    """Add the ``/mcp`` route to ``routes``; the caller runs ``server.session_manager.run()`` in its lifespan.

    Host-header (DNS rebinding) checks are off: every request must carry the bearer token, which a
    web page the user visits cannot have, and the server may be reached under any name behind a
    proxy."""
    server = build_mcp(lambda ctx: ServerBackend(state, principal_of(ctx)))
    server.streamable_http_app(
        streamable_http_path=MCP_PATH, stateless_http=True, json_response=True,
        max_request_body_size=state.settings.server_max_body_bytes,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )  # fmt: skip
    routes.append(Route(MCP_PATH, endpoint=StreamableHTTPASGIApp(server.session_manager)))
    return server

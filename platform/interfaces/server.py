"""``engramdb serve``: a REST API where one process owns the memory and many clients share it.

Why a server: the embedded vector store has a single owner, so a second
process opening the same data home is refused. Here one process opens the
stores once (the local Neo4j is started as the SDK does, unless an external one
is configured) and answers everyone over HTTP.

How the work is split, and why:

* **Reads** (asks, listings, stats, analyst Cypher) run on a pool of
  ``server_workers`` threads. Endpoints are ``async`` and only await that pool,
  so a slow ask never holds the event loop or the framework's own thread pool.
* **Writes** (ingest jobs, deletes) go through one queue served by one thread
  (:mod:`engramdb.platform.interfaces.server_jobs`): ingest returns ``202`` with
  a job id at once, and the job runs to its end whether or not its client stays.
* **/health** awaits neither: its two probes run on their own threads with a
  short timeout, so it answers while every worker is busy.

One :class:`ServerMemory` per namespace is opened on first use and kept; they
share the server's one Neo4j driver, one vector store, one embedder and
reranker. Every ``/v1`` route needs ``Authorization: Bearer <token>``
(:mod:`engramdb.platform.interfaces.server_tokens`); errors are JSON
``{"error": {"code", "message"}}``, 4xx for what the client got wrong (nothing
is written then), and a 5xx never carries a traceback (the log has it).
"""

import asyncio
import contextlib
import ipaddress
import json
import logging
import logging.handlers
import os
import signal
import socket
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any, TypeVar

from langchain_core.language_models import BaseChatModel
from neo4j import Driver
from pydantic import BaseModel, ConfigDict, Field

from engramdb.platform.config import Settings, validate_namespace
from engramdb.platform.embedders import Embedder
from engramdb.platform.errors import ConfigError, EngramError, InputError, LLMError, unreachable_store
from engramdb.platform.interfaces.analyst import QueryRefused, QueryTimedOut
from engramdb.platform.interfaces.memory import Memory
from engramdb.platform.interfaces.server_discovery import announce_server, withdraw_server
from engramdb.platform.interfaces.server_jobs import ServerStopping, Writer
from engramdb.platform.interfaces.server_tokens import (
    Principal,
    TokenBook,
    admin_token_path,
    ensure_admin_token,
    read_admin_token,
)
from engramdb.platform.store_lock import ensure_private_dir
from engramdb.platform.text_safety import unicode_problem

try:
    import uvicorn
    from fastapi import Body, Depends, FastAPI, Query, Request, Security
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import Response
    from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
    from starlette.exceptions import HTTPException as StarletteHTTPException
    from starlette.types import ASGIApp, Message, Receive, Scope, Send
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ConfigError(
        f"`engramdb serve` needs the server extra ({exc.name} is missing): pip install 'engramdb[server]'"
    ) from exc

log = logging.getLogger("engramdb.server")
T = TypeVar("T")

API_PREFIX = "/v1"
#: Paths under these need a bearer token: the REST API and the MCP endpoint.
AUTHENTICATED_PREFIXES = (API_PREFIX, "/mcp")
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
#: Seconds each /health probe may take before it counts as down.
HEALTH_TIMEOUT = 2.0
#: A namespace the vector probe counts in (a read; any valid name does).
HEALTH_NAMESPACE = "default"
#: Documents listed per request unless ``limit`` says otherwise, and at most.
DOCUMENTS_PAGE = 100
DOCUMENTS_PAGE_MAX = 10_000
LOG_FILE_BYTES = 10 * 1024 * 1024
LOG_FILE_BACKUPS = 3
CYPHER_DESCRIPTION = (
    "Run an analyst's **read-only** Cypher query, exactly as `engramdb cypher` does: planned with EXPLAIN and "
    "refused (403, nothing run) when it writes, changes the schema, administers the DBMS, reads server files "
    "(LOAD CSV) or calls a procedure outside a short read-only allowlist; run in a read transaction that is "
    "rolled back; at most `limit` rows (default `analyst_row_limit`); stopped by Neo4j after `timeout` "
    "seconds (default `analyst_timeout`, clamped to `cypher_max_timeout`). `$namespace` is the path's "
    "namespace.\n\n**Analyst Cypher sees every namespace**: Neo4j Community has no per-namespace permissions, "
    "so a query may read any namespace's nodes whatever `$namespace` says. Only the admin token may call it; "
    "a namespace-scoped token gets 403."
)


# --------------------------------------------------------------------------- errors


class ApiError(Exception):
    """An error with its HTTP status and machine-readable code; ``extra`` fields join the error object."""

    def __init__(self, status: int, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.extra = status, code, message, extra


class EngramJSONResponse(Response):
    """JSON as ``engramdb ask --json`` prints it (``default=str``), ASCII-escaped.

    Why not Starlette's JSONResponse: it refuses values json cannot encode natively (a date in a
    document row) and writes raw UTF-8, which fails on a lone surrogate quoted back from the input.
    """

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return json.dumps(content, default=str).encode("ascii")


def error_response(status: int, code: str, message: str, headers: dict[str, str] | None = None,
                   **extra: Any) -> EngramJSONResponse:  # fmt: skip
    return EngramJSONResponse({"error": {"code": code, "message": message, **extra}}, status, headers=headers)


def classify(exc: BaseException) -> tuple[int, str, str]:
    """``(status, code, message)`` for an exception an endpoint raised."""
    if isinstance(exc, ApiError):
        return exc.status, exc.code, exc.message
    if isinstance(exc, ServerStopping):
        return 503, "stopping", "the server is stopping"
    store = unreachable_store(exc)
    if store is not None:
        name = "Neo4j" if store == "neo4j" else "the vector store"
        return 503, "store_unavailable", f"{name} is not reachable from the server; try again later"
    if isinstance(exc, QueryRefused):  # a write (or admin command) in the read-only Cypher endpoint
        return 403, "query_refused", str(exc)
    if isinstance(exc, QueryTimedOut):  # the client's own timeout (or the clamp) stopped its query
        return 400, "query_timed_out", str(exc)
    if isinstance(exc, InputError):
        return 400, "invalid_input", str(exc)
    if isinstance(exc, LLMError):
        return 502, "llm_failed", str(exc)
    if isinstance(exc, ConfigError):
        return 500, "server_misconfigured", str(exc)
    return 500, "internal_error", "internal error"


def _failure_response(exc: BaseException, request_path: str) -> EngramJSONResponse:
    """The response for ``exc``; a 5xx is logged with its traceback and an id the client can quote."""
    status, code, message = classify(exc)
    extra = exc.extra if isinstance(exc, ApiError) else {}
    if status >= 500:
        ref = uuid.uuid4().hex[:12]
        log.error("%s failed [error %s]", request_path, ref, exc_info=exc)
        message = f"{message} (error {ref}; the server log has the details)"
    return error_response(status, code, message, **extra)


# --------------------------------------------------------------------------- requests


class _Strict(BaseModel):
    """Request bodies: unknown fields are errors (a typo must not pass silently), types are not coerced."""

    model_config = ConfigDict(extra="forbid", strict=True)


class AskRequest(_Strict):
    question: str = Field(description="The question.")
    strategy: str = Field("chain", description="A strategy from GET /v1/strategies.")
    budget: int | None = Field(None, ge=16, le=100_000, description="Evidence tokens at most.")
    options: dict[str, Any] = Field(
        default_factory=dict,
        description='Recipe knobs of the strategy for this call, e.g. {"beam_width": 8}.',
    )
    decomposition: list[list[str]] | None = Field(
        None, description='Sub-questions: [["q1", "q2 <ENTITY_Q1>"]] (strategies that decompose).'
    )
    trace: bool = Field(False, description="Keep chain search's hop trace in the result.")


class SectionIn(_Strict):
    """A Markdown section as the loaders read it: its heading path, its own text, whether it is top-level."""

    path: list[str]
    text: str
    top: bool = False


class DocumentIn(_Strict):
    text: str
    title: str | None = None
    id: str | None = None
    source: str | None = None
    metadata: dict[str, Any] | None = None
    sections: list[SectionIn] | None = Field(
        None, description="Markdown sections (what `engramdb ingest` sends for a .md file); `text` is theirs."
    )


class IngestRequest(_Strict):
    documents: list[DocumentIn | str] = Field(description="Documents, or plain texts.")


class DeleteRequest(_Strict):
    ids: list[str] = Field(description="Document ids; all are deleted, or none when any is unknown.")


class CypherRequest(_Strict):
    query: str
    params: dict[str, Any] = Field(default_factory=dict, description="Query parameters (never spliced).")
    limit: int | None = Field(None, ge=1, le=100_000, description="Rows at most (default analyst_row_limit).")
    timeout: float | None = Field(
        None,
        gt=0,
        allow_inf_nan=False,
        description="Seconds (default analyst_timeout; at most cypher_max_timeout).",
    )


# --------------------------------------------------------------------------- memory


class ServerMemory(Memory):
    """A Memory on the server's shared driver, whose strategies are built once even when asked concurrently.

    Why a subclass: ``Memory`` opens a driver (a connection pool) of its own and closes it in
    ``close``; here every namespace shares the server's. And ``Memory.ask`` looks a built strategy
    up and stores it without a lock, so two first asks could each build one; ``strategy`` below
    memoises under a lock, so both get the same object (and share its caches).
    """

    def __init__(self, namespace: str, settings: Settings, *, driver: Driver, embedder: Embedder,
                 reranker: Any, chat_model: BaseChatModel | None) -> None:  # fmt: skip
        super().__init__(namespace, settings, chat_model=chat_model, embedder=embedder, reranker=reranker)
        self._server_driver = driver
        self._strategy_lock = threading.Lock()
        self._built: dict[tuple[str, tuple[tuple[str, str], ...]], Any] = {}

    @property  # type: ignore[override]
    def driver(self) -> Driver:
        """The server's driver (a property, not cached here, so ``close`` leaves it open)."""
        return self._server_driver

    def strategy(self, name: str = "chain", *, chat_model: BaseChatModel | None = None,
                 decomposition: str = "auto", **options: Any) -> Any:  # fmt: skip
        if chat_model is not None or decomposition != "auto":
            return super().strategy(name, chat_model=chat_model, decomposition=decomposition, **options)
        key = (name, tuple(sorted((k, repr(v)) for k, v in options.items())))
        with self._strategy_lock:
            built = self._built.get(key)
            if built is None:
                built = self._built[key] = super().strategy(name, **options)
            return built

    def close(self) -> None:
        super().close()
        self._built.clear()


class ServerState:
    """What the process owns: the stores, the models, the per-namespace memories, the pools, the tokens."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.tokens = TokenBook(settings.home)
        self.ask_pool = ThreadPoolExecutor(settings.server_workers, thread_name_prefix="engramdb-ask")
        self.health_pool = ThreadPoolExecutor(2, thread_name_prefix="engramdb-health")
        self.writer = Writer()
        self.driver: Driver | None = None
        self.vectors: Any = None
        self.embedder: Embedder | None = None
        self.reranker: Any = None
        self.chat_model: BaseChatModel | None = None
        self.strategies: list[dict[str, Any]] = []
        self._memories: dict[str, ServerMemory] = {}
        self._lock = threading.Lock()
        self._closed = False

    def open(self) -> None:
        """Open everything before the first request: a store that cannot be opened fails the start."""
        from engramdb.platform.embedders import make_embedder
        from engramdb.platform.graph import apply_schema, connect
        from engramdb.platform.llm import make_chat_model
        from engramdb.platform.shared_stores import acquire_vector_store
        from engramdb.platform.storage import CHUNK_COLLECTION, ENTITY_COLLECTION, QA_COLLECTION
        from engramdb.retrieval.rerankers import make_reranker
        from engramdb.retrieval.strategy import make_recipe, strategy_class, strategy_names

        s = self.settings
        self.driver = connect(s)  # starts the local Neo4j when none runs (and autostart allows)
        apply_schema(self.driver, s.neo4j_database)
        self.vectors = acquire_vector_store(s)
        self.embedder = make_embedder(s)
        load = getattr(self.embedder, "load", None)
        if callable(load):
            load()  # the model, now: the first ask should not pay for it
        for collection in (QA_COLLECTION, CHUNK_COLLECTION, ENTITY_COLLECTION):
            self.vectors.ensure_collection(collection, self.embedder.dim)
        from engramdb.platform.interfaces.server_jobs import JobStore, home_id

        self.writer.store = JobStore(self.driver, s.neo4j_database, home_id(s.home))
        interrupted = self.writer.store.interrupt_unfinished()
        if interrupted:
            log.warning("%d job(s) of this data home were cut off when its server last stopped: marked "
                        "interrupted (%s)", len(interrupted), ", ".join(interrupted))  # fmt: skip
        self.writer.store.forget_old()
        self.reranker = make_reranker(s)
        self.chat_model = make_chat_model(s)
        self.strategies = [
            {"name": name, "summary": strategy_class(name).summary,
             "defaults": make_recipe(name, s.ask.get(name)).model_dump(mode="json"),
             "schema": strategy_class(name).recipe_type.model_json_schema()}
            for name in strategy_names()
        ]  # fmt: skip
        log.info("stores open: Neo4j %s, vectors %s", s.neo4j_uri or "local",
                 s.qdrant_url or s.qdrant_path)  # fmt: skip

    def memory(self, namespace: str) -> ServerMemory:
        """The namespace's memory, opened on first use and kept (creation is serialised by a lock)."""
        with self._lock:
            if self._closed:
                raise ServerStopping("the server is stopping")
            memory = self._memories.get(namespace)
            if memory is None:
                assert self.driver is not None and self.embedder is not None, "open() first"
                memory = ServerMemory(namespace, self.settings, driver=self.driver, embedder=self.embedder,
                                      reranker=self.reranker, chat_model=self.chat_model)  # fmt: skip
                # Everything the ask path reads lazily, opened here under the lock, not racing in the pool.
                for name in ("graph", "vectors", "embedder", "reranker", "chat_model"):
                    getattr(memory, name)
                self._memories[namespace] = memory
                log.info("opened namespace %r", namespace)
            return memory

    # Work run on the pools --------------------------------------------------
    def ask(self, namespace: str, request: AskRequest) -> dict[str, Any]:
        from engramdb.retrieval.strategy import strategy_class

        knobs = strategy_class(request.strategy).recipe_type.model_fields  # unknown strategy: InputError
        unknown = sorted(set(request.options) - set(knobs))
        if unknown:
            raise InputError(f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
                             f"for strategy {request.strategy!r}; its options: {', '.join(knobs)}")  # fmt: skip
        if request.budget is not None and "budget" in request.options:
            raise InputError("budget is given twice (in the body and in options): give it once")
        memory = self.memory(namespace)
        if not memory.document_counts():
            raise ApiError(404, "empty_namespace", f"namespace {namespace!r} holds no documents: add some with "
                           f"POST {API_PREFIX}/namespaces/{namespace}/documents")  # fmt: skip
        result = memory.ask(request.question, strategy=request.strategy, decomposition=request.decomposition,
                            trace=request.trace, budget=request.budget, **request.options)  # fmt: skip
        return result.to_dict()

    def documents(self, namespace: str, status: str | None, limit: int, offset: int) -> dict[str, Any]:
        memory = self.memory(namespace)
        rows = memory.documents(status=status, limit=offset + limit)[offset:]
        counts = memory.document_counts()
        total = counts.get(status, 0) if status else sum(counts.values())
        return {"namespace": namespace, "documents": rows, "total": total, "offset": offset, "limit": limit}

    def stats(self, namespace: str) -> dict[str, Any]:
        return self.memory(namespace).stats()

    def delete(self, namespace: str, ids: list[str]) -> dict[str, Any]:
        """All or none, like ``engramdb delete``; run on the writer thread, after the writes queued before it."""
        memory = self.memory(namespace)
        wanted = list(dict.fromkeys(ids))
        known = memory.document_status(wanted)
        missing = [doc_id for doc_id in wanted if doc_id not in known]
        if missing:
            names = ", ".join(repr(doc_id) for doc_id in missing)
            none = "" if len(wanted) == 1 else f"; none of the {len(wanted)} documents was deleted"
            raise ApiError(404, "documents_not_found",
                           f"no document{'s' if len(missing) > 1 else ''} {names} in namespace {namespace!r}{none}",
                           missing=missing)  # fmt: skip
        reports = memory.delete_many(wanted)
        return {"namespace": namespace, "deleted": [asdict(report) for report in reports]}

    def cypher(self, namespace: str, request: CypherRequest) -> dict[str, Any]:
        from engramdb.platform.interfaces import analyst

        s = self.settings
        wanted = request.timeout if request.timeout is not None else s.analyst_timeout
        seconds = analyst.bounded_timeout(wanted, s.cypher_max_timeout)
        assert self.driver is not None, "open() first"
        result = analyst.run_cypher(
            self.driver, request.query, {**request.params, "namespace": namespace}, database=s.neo4j_database,
            limit=request.limit if request.limit is not None else s.analyst_row_limit, timeout=seconds,
            max_timeout=s.cypher_max_timeout,
        )  # fmt: skip
        return {**result.to_dict(), "timeout": seconds}

    def neo4j_ok(self) -> bool:
        assert self.driver is not None
        self.driver.verify_connectivity()
        return True

    def vectors_ok(self) -> bool:
        from engramdb.platform.storage import CHUNK_COLLECTION

        self.vectors.count(CHUNK_COLLECTION, HEALTH_NAMESPACE)
        return True

    def close(self) -> None:
        """Stop the writer (a running ingest stops at its next safe point), finish running asks, close
        every memory and then the stores; idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if not self.writer.stop(self.settings.server_shutdown_grace):
            log.warning("a write was still running after %g s; closing the stores under it (its documents stay "
                        "pending and resume on the next ingest)", self.settings.server_shutdown_grace)  # fmt: skip
        self.ask_pool.shutdown(wait=True, cancel_futures=True)
        self.health_pool.shutdown(wait=False, cancel_futures=True)
        for namespace, memory in list(self._memories.items()):
            try:
                memory.close()
            except Exception:  # noqa: BLE001 - closing the others matters more
                log.exception("closing namespace %r failed", namespace)
        self._memories.clear()
        if self.vectors is not None:
            self.vectors.close()
        if self.driver is not None:
            self.driver.close()
        log.info("closed every memory and store")


async def in_pool(pool: ThreadPoolExecutor, work: Callable[..., T], *args: Any) -> T:
    """Await ``work(*args)`` on ``pool`` without holding the event loop or a framework thread."""
    try:
        future: Future[T] = pool.submit(work, *args)
    except RuntimeError as exc:  # the pool is shut down: the server is stopping
        raise ServerStopping("the server is stopping") from exc
    return await asyncio.wrap_future(future)


async def _probe(pool: ThreadPoolExecutor, check: Callable[[], bool]) -> bool:
    try:
        return await asyncio.wait_for(in_pool(pool, check), HEALTH_TIMEOUT)
    except Exception:  # noqa: BLE001 - any failure, or no answer in time, is "down"
        return False


# --------------------------------------------------------------------------- ASGI guard


class Guard:
    """Before any route code: the body size limit and the bearer token; around it: the last-resort 500.

    Why here and not in a dependency: FastAPI reads and parses the body before it runs
    dependencies, so a client without a token would learn whether its JSON parses, and an oversized
    body would be read whole first. A request declaring a larger ``Content-Length`` is refused
    at once; one that streams more than it declared (or uses chunked encoding) is cut off when it
    passes the limit. The principal found is left in ``scope["state"]`` for the routes.
    """

    def __init__(self, app: ASGIApp, state: ServerState) -> None:
        self.app = app
        self.state = state
        self.limit = state.settings.server_max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        declared = headers.get("content-length")
        numeric = declared is not None and declared.isascii() and declared.isdigit()
        if declared is not None and (not numeric or int(declared) > self.limit):
            response = (error_response(413, "body_too_large", self._too_large()) if numeric
                        else error_response(400, "bad_request", "Content-Length is not a number"))  # fmt: skip
            await response(scope, receive, send)
            return
        path: str = scope["path"]
        if any(path == prefix or path.startswith(prefix + "/") for prefix in AUTHENTICATED_PREFIXES):
            principal = self._principal(headers.get("authorization"))
            if principal is None:
                response = error_response(
                    401, "unauthorized", "missing or unknown token: send Authorization: Bearer <token> "
                    "(the admin token is shown by `engramdb token show`)", {"WWW-Authenticate": "Bearer"},
                )  # fmt: skip
                await response(scope, receive, send)
                return
            scope.setdefault("state", {})["principal"] = principal
        started = False
        received = 0

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:  # FastAPI passes this on as it is, and it becomes a JSON 413
                    raise StarletteHTTPException(413, self._too_large())
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except Exception as exc:
            if started:
                raise
            await _failure_response(exc, f"{scope.get('method')} {path}")(scope, receive, send)

    def _too_large(self) -> str:
        return (
            f"the request body is larger than the server accepts ({self.limit} bytes: server_max_body_bytes)"
        )

    def _principal(self, header: str | None) -> Principal | None:
        if not header:
            return None
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        return self.state.tokens.verify(token.strip())


# --------------------------------------------------------------------------- the app


def create_app(
    state: ServerState, on_ready: Callable[[], None] | None = None, *, mcp: bool = True
) -> FastAPI:
    """The FastAPI application over an opened :class:`ServerState` (closed when the app shuts down),
    with the MCP tools at ``/mcp`` unless ``mcp`` is false."""
    from importlib.metadata import version

    mcp_routes: list[Any] = []

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        try:
            async with contextlib.AsyncExitStack() as stack:
                if mcp_server is not None:
                    await stack.enter_async_context(mcp_server.session_manager.run())
                if on_ready is not None:
                    on_ready()
                yield
        finally:
            await asyncio.get_running_loop().run_in_executor(None, state.close)

    app = FastAPI(
        title="engramdb", version=version("engramdb"), lifespan=lifespan, docs_url="/docs", redoc_url=None,
        default_response_class=EngramJSONResponse,
        description="Structured memory over HTTP: one server process owns the memory; every namespace's "
        "ask, documents, stats and (admin) analyst Cypher. Every `/v1` route needs `Authorization: Bearer "
        "<token>` (`engramdb token show` prints the admin token; `engramdb token create --namespace NAME` "
        "makes one limited to namespaces). Errors are `{\"error\": {\"code\", \"message\"}}`.",
    )  # fmt: skip
    app.add_middleware(Guard, state=state)
    mcp_server = None
    if mcp:
        from engramdb.platform.interfaces.server_mcp import mount_mcp

        mcp_server = mount_mcp(mcp_routes, state)
        app.router.routes.extend(mcp_routes)
    bearer = HTTPBearer(auto_error=False, description="The admin token, or a namespace-scoped one.")

    def principal(request: Request,
                  _credentials: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)]) -> Principal:  # fmt: skip
        found = request.scope.get("state", {}).get("principal")
        if not isinstance(found, Principal):  # the Guard lets no /v1 request through without one
            raise ApiError(401, "unauthorized", "missing or unknown token")
        return found

    Who = Annotated[Principal, Depends(principal)]

    def namespace_access(namespace: str, who: Who) -> str:
        try:
            validate_namespace(namespace)
        except ValueError as exc:
            raise ApiError(400, "invalid_namespace", str(exc)) from exc
        if not who.may_use(namespace):
            raise ApiError(403, "forbidden", f"this token may not use namespace {namespace!r}")
        return namespace

    Namespace = Annotated[str, Depends(namespace_access)]

    # Errors ---------------------------------------------------------------------
    @app.exception_handler(ApiError)
    @app.exception_handler(EngramError)
    @app.exception_handler(ServerStopping)
    async def _known(request: Request, exc: Exception) -> Response:
        return _failure_response(exc, f"{request.method} {request.url.path}")

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        errors = exc.errors()
        content_type = request.headers.get("content-type", "")
        if content_type and "json" not in content_type.lower() and any(e.get("loc", ())[:1] == ("body",)
                                                                     for e in errors):  # fmt: skip
            return error_response(415, "unsupported_media_type",
                                  f"send the body as JSON (Content-Type: application/json), not {content_type}")  # fmt: skip
        if any(e.get("type") == "json_invalid" for e in errors):
            where = next(e for e in errors if e.get("type") == "json_invalid")
            detail = (where.get("ctx") or {}).get("error", "invalid JSON")
            return error_response(400, "malformed_json", f"the request body is not valid JSON: {detail}")
        problems = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in errors)
        return error_response(422, "invalid_request", problems)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_request: Request, exc: StarletteHTTPException) -> Response:
        codes = {404: "not_found", 405: "method_not_allowed", 413: "body_too_large"}
        return error_response(exc.status_code, codes.get(exc.status_code, "http_error"), str(exc.detail),
                              headers=dict(exc.headers or {}))  # fmt: skip

    # Routes ---------------------------------------------------------------------
    @app.get("/health", tags=["service"], summary="Liveness of the server and its stores (no token)")
    async def health() -> Response:
        neo4j, vectors = await asyncio.gather(_probe(state.health_pool, state.neo4j_ok),
                                              _probe(state.health_pool, state.vectors_ok))  # fmt: skip
        ok = neo4j and vectors
        return EngramJSONResponse({"status": "ok" if ok else "degraded", "neo4j": neo4j, "vectors": vectors},
                                  200 if ok else 503)  # fmt: skip

    @app.get(f"{API_PREFIX}/strategies", tags=["ask"], summary="Ask strategies and their recipe knobs")
    async def strategies(_who: Who) -> Response:
        """Each strategy with its summary, its knobs' configured defaults, and their JSON schema."""
        return EngramJSONResponse({"strategies": state.strategies})

    @app.post(
        f"{API_PREFIX}/namespaces/{{namespace}}/ask", tags=["ask"], summary="Answer a question from memory"
    )
    async def ask(body: AskRequest, namespace: Namespace) -> Response:
        """Exactly `AskResult.to_dict()` (what `engramdb ask --json` prints). A namespace without documents
        is 404; an unknown strategy or option is 400."""
        return EngramJSONResponse(await in_pool(state.ask_pool, state.ask, namespace, body))

    @app.post(f"{API_PREFIX}/namespaces/{{namespace}}/documents", tags=["documents"], status_code=202,
              summary="Ingest documents (a job)")  # fmt: skip
    async def ingest(
        body: Annotated[IngestRequest | list[DocumentIn | str], Body()], namespace: Namespace
    ) -> Response:
        """Validate the documents, queue an ingest job and return `202 {"job_id"}` at once; poll
        `GET /v1/jobs/{id}`. The job runs to its end even if the client goes away."""
        from starlette.concurrency import run_in_threadpool

        items = body.documents if isinstance(body, IngestRequest) else body
        documents = await run_in_threadpool(to_documents, items)
        memory = await run_in_threadpool(state.memory, namespace)
        job = state.writer.submit_ingest(memory, documents)
        return EngramJSONResponse(
            {"job_id": job.id, "namespace": namespace, "state": job.state, "documents_total": len(documents)},
            202, headers={"Location": f"{API_PREFIX}/jobs/{job.id}"},
        )  # fmt: skip

    @app.get(f"{API_PREFIX}/jobs", tags=["documents"], summary="Recent ingest jobs, newest first")
    async def jobs(who: Who, limit: Annotated[int, Query(ge=1, le=1000)] = 50) -> Response:
        """This server's jobs and the recorded ones (earlier runs; other servers on the same Neo4j) of
        the namespaces the token may use. A job cut off by a killed server is `failed`, its `error`
        saying it was interrupted."""
        namespaces = None if who.namespaces is None else sorted(who.namespaces)
        found = await in_pool(state.ask_pool, state.writer.recent, namespaces, limit)
        return EngramJSONResponse({"jobs": found})

    @app.get(f"{API_PREFIX}/jobs/{{job_id}}", tags=["documents"], summary="An ingest job's state and report")
    async def job(job_id: str, who: Who) -> Response:
        data = state.writer.job(job_id, stored=False)  # this process's jobs: no query, no thread
        if data is None:
            data = await in_pool(state.ask_pool, state.writer.job, job_id)
        if data is None:
            raise ApiError(404, "job_not_found", f"no job {job_id!r}")
        if not who.may_use(data["namespace"]):
            raise ApiError(403, "forbidden", f"this token may not use namespace {data['namespace']!r}")
        return EngramJSONResponse(data)

    @app.get(f"{API_PREFIX}/namespaces/{{namespace}}/documents", tags=["documents"], summary="List documents")
    async def documents(
        namespace: Namespace,
        status: Annotated[str | None, Query(description="done, pending or failed")] = None,
        limit: Annotated[int, Query(ge=0, le=DOCUMENTS_PAGE_MAX)] = DOCUMENTS_PAGE,
        offset: Annotated[int, Query(ge=0)] = 0,
    ) -> Response:
        """The namespace's documents ordered by id (`Memory.documents` rows), one page; `total` counts all."""
        page = await in_pool(state.ask_pool, state.documents, namespace, status or None, limit, offset)
        return EngramJSONResponse(page)

    @app.get(f"{API_PREFIX}/namespaces/{{namespace}}/documents/{{doc_id:path}}", tags=["documents"],
             summary="One document with its passages")  # fmt: skip
    async def document(namespace: Namespace, doc_id: str) -> Response:
        """`Memory.document`: id, title, status, source and the passages in order; 404 when unknown."""
        found = await in_pool(state.ask_pool, lambda: state.memory(namespace).document(doc_id))
        if found is None:
            raise ApiError(404, "document_not_found", f"no document {doc_id!r} in namespace {namespace!r}")
        return EngramJSONResponse(found)

    @app.delete(f"{API_PREFIX}/namespaces/{{namespace}}/documents", tags=["documents"],
                summary="Delete documents, all or none")  # fmt: skip
    async def delete(body: DeleteRequest, namespace: Namespace) -> Response:
        """Like `engramdb delete`: if any id is unknown nothing is deleted and the 404 names each missing id."""
        if not body.ids:
            raise InputError("give at least one document id")
        for doc_id in body.ids:
            problem = unicode_problem(doc_id, "a document id")
            if problem:
                raise InputError(problem)
        return EngramJSONResponse(await _on_writer(state, lambda: state.delete(namespace, body.ids)))

    @app.get(f"{API_PREFIX}/namespaces/{{namespace}}/stats", tags=["documents"], summary="Counts")
    async def stats(namespace: Namespace) -> Response:
        """`Memory.stats()`: node, edge and vector counts, and documents by status."""
        return EngramJSONResponse(await in_pool(state.ask_pool, state.stats, namespace))

    @app.post(f"{API_PREFIX}/namespaces/{{namespace}}/cypher", tags=["analyst"],
              summary="Read-only analyst Cypher (admin token; sees every namespace)",
              description=CYPHER_DESCRIPTION)  # fmt: skip
    async def cypher(body: CypherRequest, namespace: Namespace, who: Who) -> Response:
        if not who.is_admin:
            raise ApiError(
                403, "forbidden", "analyst Cypher sees every namespace, so it needs the admin token"
            )
        return EngramJSONResponse(await in_pool(state.ask_pool, state.cypher, namespace, body))

    return app


async def _on_writer(state: ServerState, work: Callable[[], T]) -> T:
    try:
        future = state.writer.run(work)
    except RuntimeError as exc:
        raise ServerStopping("the server is stopping") from exc
    return await asyncio.wrap_future(future)


def to_documents(items: list[Any]) -> list[Any]:
    """Validated Documents from the request's items; never reads a path (``Memory.ingest`` would, for
    a string that looks like one: on a server that would be the server's files).

    Identical documents collapse to one; two different texts under one id are an error.
    """
    from engramdb.ingestion.documents import make_document

    if not items:
        raise InputError("no documents given")
    documents: dict[str, Any] = {}
    for item in items:
        if isinstance(item, str):
            doc = make_document(item)
        else:
            from engramdb.ingestion.markdown import Section

            sections = tuple(Section(tuple(x.path), x.text, x.top) for x in item.sections or ())
            doc = make_document(item.text, title=item.title, id=item.id, source=item.source or "",
                                metadata=item.metadata, sections=sections)  # fmt: skip
        prior = documents.get(doc.id)
        if prior is not None and prior.content_hash != doc.content_hash:
            raise InputError(f"two different documents share the id {doc.id!r}")
        documents.setdefault(doc.id, doc)
    return list(documents.values())


# --------------------------------------------------------------------------- running it


def is_loopback(host: str) -> bool:
    """Only a loopback address (or ``localhost``) keeps the API on this machine."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def setup_logging(home: Path) -> Path:
    """Send every log record of this process to ``<home>/logs/server.log`` (mode 0600), none to the terminal."""
    ensure_private_dir(home)
    folder = home / "logs"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / "server.log"
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
    handler = logging.handlers.RotatingFileHandler(path, maxBytes=LOG_FILE_BYTES, backupCount=LOG_FILE_BACKUPS,
                                                   encoding="utf-8")  # fmt: skip
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(threadName)s] %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    for name in ("engramdb", "neo4j", "uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        for old in list(logger.handlers):  # the CLI's stderr notices: the server's terminal stays quiet
            logger.removeHandler(old)
        logger.propagate = True
    logging.getLogger("neo4j").setLevel(logging.WARNING)
    logging.captureWarnings(True)
    return path


def bind(host: str, port: int) -> socket.socket:
    """A listening socket, so a busy port fails the start at once with the OS's reason."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise EngramError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def reachable_url(url: str) -> str:
    """``url`` as a client on this machine connects to it: a wildcard address becomes loopback."""
    return url.replace("//0.0.0.0:", "//127.0.0.1:").replace("//[::]:", "//[::1]:")


@contextlib.contextmanager
def _stop_on_signals(server: "uvicorn.Server") -> Iterator[None]:
    """SIGINT/SIGTERM ask uvicorn to stop; after its graceful shutdown uvicorn raises the signal
    again, which lands here and is absorbed, so a stopped server exits 0 (not 130 or 143)."""

    def stop(_signum: int, _frame: object) -> None:
        server.should_exit = True

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def serve(settings: Settings, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
          announce: Callable[[str], None] | None = None) -> None:  # fmt: skip
    """Run the server until SIGINT/SIGTERM; ``announce`` gets the one startup line (the URL).

    A non-loopback ``host`` is refused until an admin token exists, so the API is never exposed
    before its owner has a token (``engramdb token show`` creates and prints it).
    """
    if not is_loopback(host) and read_admin_token(settings.home) is None:
        raise ConfigError(
            f"refusing to listen on {host} (not a loopback address) before an access token exists: run "
            f"`engramdb token show` (it creates {admin_token_path(settings.home)}) and start again"
        )
    ensure_admin_token(settings.home)
    log_path = setup_logging(settings.home)
    sock = bind(host, port)
    url = url_of(sock)
    state = ServerState(settings)
    try:
        log.info("starting on %s (data home %s)", url, settings.home)
        state.open()

        def ready() -> None:
            log.info("serving on %s", url)
            announce_server(settings.home, reachable_url(url))  # CLI commands of this home now go through us
            if announce is not None:
                announce(f"engramdb serving on {url} (API docs {url}/docs; log {log_path})")

        config = uvicorn.Config(
            create_app(state, on_ready=ready), log_config=None, access_log=True, lifespan="on",
            timeout_graceful_shutdown=max(1, int(settings.server_shutdown_grace)),
        )  # fmt: skip
        server = uvicorn.Server(config)
        with _stop_on_signals(server):
            server.run(sockets=[sock])
    except Exception as exc:  # the terminal gets one error line from the CLI; the log keeps it too
        log.error("could not serve: %s", exc, exc_info=not isinstance(exc, EngramError))
        raise
    finally:
        withdraw_server(settings.home)
        state.close()
        sock.close()
        log.info("stopped")

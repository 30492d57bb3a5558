"""engramdb as an MCP server: tools and document resources for agents (official ``mcp`` SDK).

Why one definition for two transports: desktop assistants and IDEs start
``engramdb mcp`` and talk over its stdin/stdout, while networked agents reach
the same tools under ``/mcp`` on ``engramdb serve`` (streamable HTTP, the
server's bearer tokens). The tools here only shape arguments and replies; the
work goes to a :class:`Backend`, of which there are three:

* :class:`LocalBackend`: ``engramdb mcp`` when no server runs for its home, so
  this process owns the stores (as any CLI command does);
* :class:`RemoteBackend`: ``engramdb mcp`` when a server runs (or one is
  named): every call goes through the REST API, since the embedded store
  admits one process;
* the server's own backend (``server_mcp.py``), which also knows the caller's
  token, so a namespace-scoped token reaches only its namespaces and never
  ``query_graph``.

The descriptions are written for an agent that has never seen our README:
what each tool is for, what it returns, and what to do with an empty answer.
"""

import json
import threading
from collections.abc import Callable
from dataclasses import asdict
from typing import Annotated, Any, Protocol
from urllib.parse import quote

import anyio.to_thread
from pydantic import Field

from engramdb.platform.config import Settings, validate_namespace
from engramdb.platform.errors import ConfigError, EngramError, InputError

try:
    import mcp_types
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ConfigError(
        f"engramdb's MCP server needs the server extra ({exc.name} is missing): pip install 'engramdb[server]'"
    ) from exc

#: The URI of a document resource; ``doc_id`` is percent-encoded (ids may hold ``/``).
DOCUMENT_URI = "engramdb://{namespace}/documents/{doc_id}"
#: Documents named by ``resources/list`` (the default namespace's first ones, by id).
RESOURCES_LISTED = 200
#: Evidence items an ``ask`` reply carries (the strongest first).
EVIDENCE_SHOWN = 12
QUERY_ROW_LIMIT = 25
QUERY_ROW_LIMIT_MAX = 500
INSTRUCTIONS = (
    "engramdb is a long-term memory of documents, stored as a graph of entities, events and "
    "question-answer pairs. Use `ask` to answer a question from what was remembered (it says N/A when "
    "memory does not support an answer), `remember` to store a new text, `list_documents` to see what is "
    "stored, `forget` to delete documents by id, and `query_graph` for read-only Cypher over the graph. "
    "Each document is also a resource (engramdb://NAMESPACE/documents/ID). Memories are kept per "
    "namespace; leave `namespace` out to use the default one."
)


def empty_namespace(namespace: str) -> str:
    return f"namespace {namespace!r} holds no documents: store some with `remember`"


def document_uri(namespace: str, doc_id: str) -> str:
    return f"engramdb://{namespace}/documents/{quote(doc_id, safe='')}"


class Backend(Protocol):
    """Where the tools' work is done; every method raises InputError for what the caller got wrong."""

    default_namespace: str

    async def ask(self, namespace: str, question: str, strategy: str, budget: int | None) -> dict[str, Any]:
        """``AskResult.to_dict()``."""
        ...

    async def remember(self, namespace: str, document: dict[str, Any]) -> dict[str, Any]:
        """Ingest one ``{text, title, id}`` document; ``asdict(IngestReport)``."""
        ...

    async def documents(self, namespace: str, status: str | None, limit: int, offset: int) -> dict[str, Any]:
        """``{documents, total}``: one page of ``Memory.documents`` rows."""
        ...

    async def forget(self, namespace: str, ids: list[str]) -> list[dict[str, Any]]:
        """Delete all of ``ids`` or none; the delete reports as dicts."""
        ...

    async def query_graph(
        self, namespace: str, query: str, params: dict[str, Any], limit: int
    ) -> dict[str, Any]:
        """The analyst's read-only Cypher (``QueryResult.to_dict()``)."""
        ...

    async def document(self, namespace: str, doc_id: str) -> dict[str, Any] | None:
        """``Memory.document``."""
        ...


# --------------------------------------------------------------------------- the tools

Namespace = Annotated[
    str | None, Field(description="Memory namespace (letters, digits, _ and -); omit for the default one.")
]


def build_mcp(resolve: Callable[[Context], Backend], *, name: str = "engramdb") -> MCPServer:
    """An MCP server whose tools and resources work on the backend ``resolve(ctx)`` gives per request."""
    from importlib.metadata import version

    from engramdb.retrieval.strategy import strategy_class, strategy_names

    strategies = strategy_names()
    strategy_lines = "\n".join(f"- {s}: {strategy_class(s).summary}" for s in strategies)

    class EngramMCP(MCPServer):
        """Lists every document of the default namespace as a resource (the SDK lists static ones only)."""

        async def _handle_list_resources(self, ctx: Any, params: Any) -> mcp_types.ListResourcesResult:
            backend = resolve(Context(request_context=ctx, mcp_server=self))
            namespace = backend.default_namespace
            try:
                page = await backend.documents(namespace, None, RESOURCES_LISTED, 0)
            except EngramError:  # e.g. a scoped token without the default namespace: nothing to list
                return mcp_types.ListResourcesResult(resources=[])
            return mcp_types.ListResourcesResult(
                resources=[
                    mcp_types.Resource(uri=document_uri(namespace, row["id"]), name=str(row["id"]),
                                       title=row.get("title") or None, mime_type="text/markdown",
                                       description=f"engramdb document ({row['status']}) in namespace {namespace}")
                    for row in page["documents"]
                ]
            )  # fmt: skip

    server = EngramMCP(name, title="engramdb memory", version=version("engramdb"), instructions=INSTRUCTIONS)

    def namespace_of(backend: Backend, namespace: str | None) -> str:
        try:
            return validate_namespace(namespace or backend.default_namespace)
        except ValueError as exc:
            raise ToolError(str(exc)) from exc

    async def guarded(work: Any) -> Any:
        try:
            return await work
        except EngramError as exc:  # InputError, ServerError, refused queries: the message says what to do
            raise ToolError(str(exc)) from exc

    @server.tool(
        annotations=mcp_types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
        description=(
            "Answer a question from the documents engramdb remembers. The answer rests only on stored "
            "evidence: `answer` is 'N/A' (and `supported` false) when memory does not support one; then "
            "try other wording, another strategy, or `list_documents` to check what is stored. Multi-hop "
            "questions ('Who founded the company that made X?') are split into sub-questions "
            "(`sub_questions`). Each evidence item has its text, score and the document it came from "
            "(`doc_id`, `title`; read the whole document as the resource in `uri`). Strategies:\n"
            f"{strategy_lines}\nUse `chain` (the default) unless you have a reason."
        ),
    )
    async def ask(
        question: Annotated[str, Field(description="The question, in natural language.", min_length=1)],
        ctx: Context,
        strategy: Annotated[str, Field(description=f"One of: {', '.join(strategies)}.")] = "chain",
        namespace: Namespace = None,
        budget: Annotated[
            int | None,
            Field(description="Evidence tokens at most (16-100000); omit for no cap.", ge=16, le=100_000),
        ] = None,
    ) -> dict[str, Any]:
        backend = resolve(ctx)
        ns = namespace_of(backend, namespace)
        if strategy not in strategies:
            raise ToolError(f"unknown strategy {strategy!r}: use one of {', '.join(strategies)}")
        result = await guarded(backend.ask(ns, question, strategy, budget))
        return ask_reply(result, ns)

    @server.tool(
        annotations=mcp_types.ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=True
        ),
        description=(
            "Store a text in memory so later `ask` calls can use it. The text is split into passages and "
            "turned into entities and question-answer pairs (this can take a few seconds per page). "
            "Remembering the same title and text again changes nothing; a new text under an existing `id` "
            "replaces that document. Returns the document's `id` (use it with `forget`) and how much was "
            "extracted; `result` is 'failed' with a `reason` when the text could not be used."
        ),
    )
    async def remember(
        text: Annotated[
            str, Field(description="The text to remember (plain text or Markdown).", min_length=1)
        ],
        title: Annotated[
            str, Field(description="A short title naming what the text is about.", min_length=1)
        ],
        ctx: Context,
        id: Annotated[
            str | None,
            Field(
                description="The document id; omit and engramdb derives a stable one from the title and text."
            ),
        ] = None,  # noqa: A002
        namespace: Namespace = None,
    ) -> dict[str, Any]:
        from engramdb.ingestion.documents import make_document

        backend = resolve(ctx)
        ns = namespace_of(backend, namespace)
        try:
            document = make_document(text, title=title, id=id)
        except (InputError, ValueError) as exc:
            raise ToolError(str(exc)) from exc
        report = await guarded(backend.remember(ns, {"text": document.text, "title": document.title,
                                                     "id": document.id}))  # fmt: skip
        result = "failed" if report["failed"] else ("unchanged" if report["skipped"] else "ingested")
        reply: dict[str, Any] = {
            "id": document.id, "title": document.title, "namespace": ns, "result": result,
            "passages": report["chunks"], "qa_pairs": report["qa_pairs"], "uri": document_uri(ns, document.id),
        }  # fmt: skip
        if report["failures"]:
            reply["reason"] = "; ".join(str(f[-1]) for f in report["failures"])
        return reply

    @server.tool(
        annotations=mcp_types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
        description=(
            "List the documents stored in a namespace, ordered by id: id, title, status ('done'; 'pending' "
            "while or after an interrupted ingest; 'failed' with `error`), passages, question-answer pairs, "
            "and the resource `uri` holding the document's text. `total` counts every document; page with "
            "`offset`."
        ),
    )
    async def list_documents(
        ctx: Context,
        namespace: Namespace = None,
        status: Annotated[
            str | None, Field(description="Only 'done', 'pending' or 'failed' documents.")
        ] = None,
        limit: Annotated[int, Field(description="Documents at most.", ge=1, le=1000)] = 50,
        offset: Annotated[int, Field(description="Documents to skip.", ge=0)] = 0,
    ) -> dict[str, Any]:
        backend = resolve(ctx)
        ns = namespace_of(backend, namespace)
        if status is not None and status not in ("done", "pending", "failed"):
            raise ToolError(f"unknown status {status!r}: use done, pending or failed")
        page = await guarded(backend.documents(ns, status, limit, offset))
        rows = [{**row, "uri": document_uri(ns, row["id"])} for row in page["documents"]]
        return {"namespace": ns, "total": page["total"], "offset": offset, "documents": rows}

    @server.tool(
        annotations=mcp_types.ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=True
        ),
        description=(
            "Delete documents from memory by id (ids from `list_documents` or `remember`), with everything "
            "derived from them: passages, question-answer pairs, vectors, and entities no other document "
            "mentions. All or none: if any id is unknown nothing is deleted and the error names it."
        ),
    )
    async def forget(
        ids: Annotated[list[str], Field(description="Document ids to delete.", min_length=1)],
        ctx: Context,
        namespace: Namespace = None,
    ) -> dict[str, Any]:
        backend = resolve(ctx)
        ns = namespace_of(backend, namespace)
        reports = await guarded(backend.forget(ns, list(dict.fromkeys(ids))))
        return {"namespace": ns, "deleted": [r["doc_id"] for r in reports], "reports": reports}

    @server.tool(
        annotations=mcp_types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
        description=(
            "Run a read-only Cypher query on the Neo4j graph behind memory, for questions `ask` cannot "
            "answer (counts, lists, paths). Nodes: Document{id,title,status}, Chunk{id,text,title}, "
            "Entity{id,name,type}, VerbPhrase{id,text}; relationships: (Document)-[:HAS_CHUNK]->(Chunk), "
            "(Chunk)-[:MENTIONS]->(Entity), (Chunk)-[:HAS_VERB_PHRASE]->(VerbPhrase), "
            "(Entity)-[:ROLE_IN]->(VerbPhrase), (VerbPhrase)-[:QA {question, answer}]->(Entity). Every node "
            "has a `namespace` property: filter with `{namespace: $namespace}` (the namespace argument). "
            "Writes, schema changes, LOAD CSV and most procedures are refused; at most `limit` rows. "
            "The query can read every namespace, so only the admin token may call this tool."
        ),
    )
    async def query_graph(
        query: Annotated[
            str, Field(description="A Cypher read query; pass values as $parameters.", min_length=1)
        ],
        ctx: Context,
        params: Annotated[
            dict[str, Any] | None, Field(description="Query parameters (never spliced).")
        ] = None,
        limit: Annotated[
            int, Field(description="Rows at most.", ge=1, le=QUERY_ROW_LIMIT_MAX)
        ] = QUERY_ROW_LIMIT,
        namespace: Namespace = None,
    ) -> dict[str, Any]:
        backend = resolve(ctx)
        ns = namespace_of(backend, namespace)
        return await guarded(backend.query_graph(ns, query, dict(params or {}), limit))  # type: ignore[no-any-return]

    @server.resource(
        DOCUMENT_URI, name="document", mime_type="text/markdown",
        description="A stored document: its title and its passages in order, as Markdown.",
    )  # fmt: skip
    async def document(namespace: str, doc_id: str, ctx: Context) -> str:
        backend = resolve(ctx)
        try:
            ns = validate_namespace(namespace)
            found = await backend.document(ns, doc_id)
        except (EngramError, ValueError) as exc:
            raise ResourceError(str(exc)) from exc
        if found is None:
            raise ResourceError(f"no document {doc_id!r} in namespace {namespace!r}")
        return document_markdown(found)

    return server


def ask_reply(result: dict[str, Any], namespace: str) -> dict[str, Any]:
    """An ``AskResult.to_dict()`` cut to what an agent uses: the answer, its strongest evidence with sources."""
    titles = {c["doc_id"]: c.get("title") for c in result.get("citations", []) if c.get("doc_id")}
    evidence = []
    for item in result.get("evidence", [])[:EVIDENCE_SHOWN]:
        entry = {"kind": item["kind"], "text": item["text"], "score": round(float(item.get("score") or 0), 4)}
        if item.get("doc_id"):
            entry |= {"doc_id": item["doc_id"], "title": titles.get(item["doc_id"]),
                      "uri": document_uri(namespace, item["doc_id"])}  # fmt: skip
        evidence.append(entry)
    answer = result.get("answer")
    reply = {
        "answer": answer, "supported": answer not in (None, "", "N/A"), "strategy": result.get("strategy"),
        "namespace": namespace, "sub_questions": result.get("decomposition", []), "evidence": evidence,
        "evidence_tokens": result.get("evidence_tokens"),
    }  # fmt: skip
    if result.get("notes"):
        reply["notes"] = result["notes"]
    return reply


def document_markdown(document: dict[str, Any]) -> str:
    """A document resource's text: a heading, then each passage (its section title when it has one)."""
    title = document.get("title") or document["id"]
    parts = [f"# {title}"]
    for passage in document.get("passages") or []:
        section = passage.get("title") or ""
        if section and section != title and " › " in section:
            parts.append(f"## {section.split(' › ', 1)[1]}")
        parts.append(passage.get("text") or "")
    return "\n\n".join(parts) + "\n"


# --------------------------------------------------------------------------- backends for `engramdb mcp`


class LocalBackend:
    """The stores opened in this process (``engramdb mcp`` when no server runs for the home).

    One Memory per namespace, opened on first use; calls run on worker threads (the event loop
    keeps answering), and writes are serialised by ``Memory``'s own write lock.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.default_namespace = settings.namespace
        self._memories: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._vectors: Any = None

    def memory(self, namespace: str) -> Any:
        from engramdb.platform.interfaces.memory import Memory

        with self._lock:
            found = self._memories.get(namespace)
            if found is None:
                first = next(iter(self._memories.values()), None)
                # Every namespace shares the first one's models and vector store (one opener per folder).
                found = Memory(namespace, self.settings) if first is None else Memory(
                    namespace, self.settings, embedder=first.embedder, reranker=first.reranker,
                    chat_model=first.chat_model, vectors=_Unclosed(first.vectors),
                )  # fmt: skip
                self._memories[namespace] = found
            return found

    async def _run(self, work: Callable[[], Any]) -> Any:
        return await anyio.to_thread.run_sync(work)

    async def ask(self, namespace: str, question: str, strategy: str, budget: int | None) -> dict[str, Any]:
        def work() -> dict[str, Any]:
            memory = self.memory(namespace)
            if not memory.document_counts():
                raise InputError(empty_namespace(namespace))
            return memory.ask(question, strategy=strategy, budget=budget).to_dict()  # type: ignore[no-any-return]

        return await self._run(work)  # type: ignore[no-any-return]

    async def remember(self, namespace: str, document: dict[str, Any]) -> dict[str, Any]:
        return await self._run(lambda: asdict(self.memory(namespace).ingest([document])))  # type: ignore[no-any-return]

    async def documents(self, namespace: str, status: str | None, limit: int, offset: int) -> dict[str, Any]:
        def work() -> dict[str, Any]:
            memory = self.memory(namespace)
            rows = memory.documents(status=status, limit=offset + limit)[offset:]
            counts = memory.document_counts()
            return {"documents": rows, "total": counts.get(status, 0) if status else sum(counts.values())}

        return await self._run(work)  # type: ignore[no-any-return]

    async def forget(self, namespace: str, ids: list[str]) -> list[dict[str, Any]]:
        return await self._run(lambda: [asdict(r) for r in self.memory(namespace).delete_many(ids)])  # type: ignore[no-any-return]

    async def query_graph(
        self, namespace: str, query: str, params: dict[str, Any], limit: int
    ) -> dict[str, Any]:
        from engramdb.platform.interfaces import analyst

        s = self.settings

        def work() -> dict[str, Any]:
            memory = self.memory(namespace)
            seconds = analyst.bounded_timeout(s.analyst_timeout, s.cypher_max_timeout)
            result = analyst.run_cypher(memory.driver, query, {**params, "namespace": namespace},
                                        database=s.neo4j_database, limit=limit, timeout=seconds,
                                        max_timeout=s.cypher_max_timeout)  # fmt: skip
            return json.loads(json.dumps(result.to_dict(), default=str))  # type: ignore[no-any-return]

        return await self._run(work)  # type: ignore[no-any-return]

    async def document(self, namespace: str, doc_id: str) -> dict[str, Any] | None:
        return await self._run(lambda: self.memory(namespace).document(doc_id))  # type: ignore[no-any-return]

    def close(self) -> None:
        with self._lock:
            memories = list(self._memories.values())
            self._memories.clear()
        for memory in reversed(memories):  # the first one owns the shared vector store: closed last
            memory.close()


class _Unclosed:
    """A vector store handed to a second Memory, which must not close it (its first Memory does)."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def close(self) -> None:
        """Nothing: the owning Memory closes the store."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


class RemoteBackend:
    """A running ``engramdb serve``, through its REST API (``engramdb.connect``)."""

    def __init__(self, url: str, token: str | None, default_namespace: str) -> None:
        self.url, self.token, self.default_namespace = url, token, default_namespace
        self._clients: dict[str, Any] = {}
        self._lock = threading.Lock()

    def client(self, namespace: str) -> Any:
        from engramdb.platform.interfaces.client import connect

        with self._lock:
            found = self._clients.get(namespace)
            if found is None:
                found = self._clients[namespace] = connect(self.url, self.token, namespace)
            return found

    async def ask(self, namespace: str, question: str, strategy: str, budget: int | None) -> dict[str, Any]:
        try:
            result = await anyio.to_thread.run_sync(
                lambda: self.client(namespace).ask(question, strategy=strategy, budget=budget)
            )
        except InputError as exc:
            if getattr(exc, "code", None) == "empty_namespace":  # the REST wording names a route, not a tool
                raise InputError(empty_namespace(namespace)) from exc
            raise
        return result.to_dict()  # type: ignore[no-any-return]

    async def remember(self, namespace: str, document: dict[str, Any]) -> dict[str, Any]:
        report = await anyio.to_thread.run_sync(lambda: self.client(namespace).ingest([document]))
        return asdict(report)

    async def documents(self, namespace: str, status: str | None, limit: int, offset: int) -> dict[str, Any]:
        params: dict[str, Any] = {"limit": limit, "offset": offset}
        if status is not None:
            params["status"] = status
        client = self.client(namespace)
        path = f"{client._ns}/documents"  # one page as the server gives it (with its total)
        return await anyio.to_thread.run_sync(lambda: client._request("GET", path, params=params))  # type: ignore[no-any-return]

    async def forget(self, namespace: str, ids: list[str]) -> list[dict[str, Any]]:
        reports = await anyio.to_thread.run_sync(lambda: self.client(namespace).delete_many(ids))
        return [asdict(r) for r in reports]

    async def query_graph(
        self, namespace: str, query: str, params: dict[str, Any], limit: int
    ) -> dict[str, Any]:
        return await anyio.to_thread.run_sync(  # type: ignore[no-any-return]
            lambda: self.client(namespace).cypher(query, params, limit=limit)
        )

    async def document(self, namespace: str, doc_id: str) -> dict[str, Any] | None:
        return await anyio.to_thread.run_sync(lambda: self.client(namespace).document(doc_id))  # type: ignore[no-any-return]

    def close(self) -> None:
        with self._lock:
            for client in self._clients.values():
                client.close()
            self._clients.clear()


def run_stdio(settings: Settings, server_url: str | None = None) -> str:
    """Serve MCP over stdin/stdout until the client closes them; returns which backend served.

    Through a running server of the home (or the one named) when there is one, else on stores
    opened here. Nothing but the protocol is written to stdout (the SDK diverts stray writes)."""
    import anyio

    from engramdb.platform.interfaces.server_discovery import find_server

    found = find_server(settings.home, server_url)
    backend: LocalBackend | RemoteBackend
    if found is not None:
        backend = RemoteBackend(found.url, found.token, settings.namespace)
    else:
        backend = LocalBackend(settings)
    server = build_mcp(lambda _ctx: backend)
    try:
        anyio.run(server.run_stdio_async)
    finally:
        backend.close()
    return found.url if found is not None else "local"

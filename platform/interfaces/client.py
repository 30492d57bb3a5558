"""``engramdb.connect(url)``: Memory's methods over HTTP, against a running ``engramdb serve``.

Why a client: the embedded vector store admits one process, so once a server
owns a data home, notebooks, scripts and agents share that memory through it.
:class:`RemoteMemory` mirrors :class:`~engramdb.platform.interfaces.memory.Memory`
(``ingest``, ``ask``, ``documents``, ``delete``, ``delete_many``, ``stats``) and
returns the same types (``IngestReport``, ``AskResult``, ``DeleteReport``), so
code written against the SDK runs unchanged against a server.

Errors keep the SDK's meaning: what the caller got wrong (the server's 4xx) is
an :class:`~engramdb.platform.errors.InputError` with the server's message, as
the in-process call would raise; what the caller cannot fix by changing the
call (a refused token, a server error, no server at all, a timeout) is a
:class:`ServerError`.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import fields
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from engramdb.platform.errors import ConfigError, EngramError, InputError

try:
    import httpx
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ConfigError(
        f"engramdb.connect needs the server extra ({exc.name} is missing): pip install 'engramdb[server]'"
    ) from exc

if TYPE_CHECKING:
    from engramdb.ingestion.pipeline import DeleteReport, IngestReport
    from engramdb.retrieval.results import AskResult

API_PREFIX = "/v1"
DEFAULT_URL = "http://127.0.0.1:8765"
TOKEN_ENV = "ENGRAMDB_SERVER_TOKEN"
#: Documents asked for per listing request (the server's page limit is 10,000).
DOCUMENTS_PAGE = 1000
#: JSON bytes per ingest request; a larger ingest is sent as several jobs in turn.
MAX_REQUEST_BYTES = 4 * 1024 * 1024
#: Statuses that are the server's problem (or the token's), not the request's.
SERVER_SIDE = (401, 403)


class RequestError(InputError):
    """The server's 4xx: what the call got wrong, with the server's ``status`` and error ``code``."""

    def __init__(self, message: str, status: int, code: str) -> None:
        super().__init__(message)
        self.status, self.code = status, code


class _NotFound(RequestError):
    """A 404 whose meaning is "no such thing" (``document`` turns it into None)."""


class ServerError(EngramError):
    """The server refused the token, failed, or could not be reached; the call did not happen.

    ``status`` is the HTTP status (None when there was no answer) and ``code`` the server's
    error code, so a caller can tell a bad token (401) from a server to retry later (503)."""

    def __init__(self, message: str, status: int | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status, self.code = status, code


ProgressCallback = Callable[[int], None]


class RemoteMemory:
    """One namespace of the memory a running ``engramdb serve`` owns, used like ``Memory``."""

    def __init__(
        self,
        url: str = DEFAULT_URL,
        token: str | None = None,
        namespace: str = "default",
        *,
        timeout: float = 300.0,
        connect_timeout: float = 10.0,
        job_timeout: float | None = None,
        poll_interval: float = 0.25,
        max_request_bytes: int = MAX_REQUEST_BYTES,
    ) -> None:
        """``token`` defaults to ``$ENGRAMDB_SERVER_TOKEN`` (none when unset: only /health answers
        then). ``timeout`` bounds each request (an ask with an LLM reader can take minutes),
        ``connect_timeout`` reaching the server, and ``job_timeout`` (None: no limit) waiting for an
        ingest job, which keeps running on the server if the wait gives up. An ingest larger than
        ``max_request_bytes`` of JSON is sent as several jobs, one after another (the server's body
        limit, ``server_max_body_bytes``, is 10 MB by default)."""
        self.url = url.rstrip("/")
        self.namespace = namespace
        self.job_timeout = job_timeout
        self.poll_interval = poll_interval
        self.max_request_bytes = max_request_bytes
        token = token if token is not None else os.environ.get(TOKEN_ENV) or None
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._timeout = timeout
        self._http = httpx.Client(base_url=self.url, headers=headers,
                                  timeout=httpx.Timeout(timeout, connect=connect_timeout))  # fmt: skip

    # Transport --------------------------------------------------------------
    @property
    def _ns(self) -> str:
        return f"{API_PREFIX}/namespaces/{quote(self.namespace, safe='')}"

    def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        """The response's JSON; any failure becomes InputError (a 4xx) or ServerError (anything else)."""
        try:
            try:
                response = self._http.request(method, path, **kwargs)
            except (httpx.ReadError, httpx.RemoteProtocolError):
                if method != "GET":
                    raise
                # A reused keep-alive connection the server closed meanwhile: a GET is safe to send again.
                response = self._http.request(method, path, **kwargs)
        except httpx.TimeoutException as exc:
            raise ServerError(f"the engramdb server at {self.url} did not answer {method} {path} in time "
                              f"({type(exc).__name__}; the timeout is {self._timeout} s)") from exc  # fmt: skip
        except httpx.TransportError as exc:
            raise ServerError(f"cannot reach the engramdb server at {self.url} ({exc or type(exc).__name__}); "
                              "is `engramdb serve` running?") from exc  # fmt: skip
        if response.status_code < 400:
            return response.json()
        raise _error_of(response)

    # Operations -------------------------------------------------------------
    def ingest(self, source: Any, *, progress: ProgressCallback | None = None) -> IngestReport:
        """Remember texts or ``{title, text, id?, source?, metadata?}`` dicts (one, or a list).

        The server runs the ingest as a job; this waits for it, calling ``progress(n)`` as ``n`` more
        documents are done (as ``Memory.ingest`` does). Strings are always texts, never paths: the
        server must not read its own files on a client's behalf."""
        from engramdb.ingestion.pipeline import IngestReport

        total = IngestReport()
        for part in _parts(_documents(source), self.max_request_bytes):
            started = self._request("POST", f"{self._ns}/documents", json={"documents": part})
            job = self._wait(started["job_id"], progress)
            if job["state"] != "done":
                raise ServerError(f"ingest job {job['id']} failed on the server: "
                                  f"{job.get('error') or 'no reason'}", code="job_failed")  # fmt: skip
            _add_report(total, job["report"])
        return total

    def _wait(self, job_id: str, progress: ProgressCallback | None) -> dict[str, Any]:
        deadline = None if self.job_timeout is None else time.monotonic() + self.job_timeout
        reported = 0
        while True:
            job = self._request("GET", f"{API_PREFIX}/jobs/{quote(job_id, safe='')}")
            if progress is not None and job["documents_done"] > reported:
                progress(job["documents_done"] - reported)
                reported = job["documents_done"]
            if job["state"] in ("done", "failed"):
                return job
            if deadline is not None and time.monotonic() > deadline:
                raise ServerError(f"ingest job {job_id} did not finish within {self.job_timeout} s; it keeps "
                                  f"running on the server (GET {API_PREFIX}/jobs/{job_id})", code="job_timeout")  # fmt: skip
            time.sleep(self.poll_interval)

    def ask(
        self,
        question: str,
        *,
        strategy: str = "chain",
        decomposition: list[list[str]] | None = None,
        budget: int | None = None,
        trace: bool = False,
        **options: Any,
    ) -> AskResult:
        """``Memory.ask`` on the server: the same strategies, recipe ``options`` and result."""
        from engramdb.retrieval.results import AskResult

        body: dict[str, Any] = {
            "question": question,
            "strategy": strategy,
            "options": options,
            "trace": trace,
        }
        if budget is not None:
            body["budget"] = budget
        if decomposition is not None:
            body["decomposition"] = [list(sequence) for sequence in decomposition]
        return AskResult.from_dict(self._request("POST", f"{self._ns}/ask", json=body))

    def documents(self, status: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        """The namespace's documents ordered by id (``Memory.documents`` rows), fetched page by page."""
        if limit is not None and limit < 0:
            raise InputError(f"limit must be 0 or more, not {limit}")
        rows: list[dict[str, Any]] = []
        while limit is None or len(rows) < limit:
            size = DOCUMENTS_PAGE if limit is None else min(DOCUMENTS_PAGE, limit - len(rows))
            params: dict[str, Any] = {"limit": size, "offset": len(rows)}
            if status is not None:
                params["status"] = status
            page = self._request("GET", f"{self._ns}/documents", params=params)["documents"]
            rows.extend(page)
            if len(page) < size:
                break
        return rows

    def delete(self, doc_id: str) -> DeleteReport:
        """Forget one document (InputError when it is unknown)."""
        return self.delete_many([doc_id])[0]

    def delete_many(self, doc_ids: Iterable[str]) -> list[DeleteReport]:
        """Forget several documents, all or none (an unknown id is an InputError naming it)."""
        from engramdb.ingestion.pipeline import DeleteReport

        wanted = [doc_ids] if isinstance(doc_ids, str) else list(dict.fromkeys(doc_ids))
        if not wanted:
            return []
        answer = self._request("DELETE", f"{self._ns}/documents", json={"ids": wanted})
        known = {f.name for f in fields(DeleteReport)}  # a newer server may report more
        return [
            DeleteReport(**{k: v for k, v in report.items() if k in known}) for report in answer["deleted"]
        ]

    def document(self, doc_id: str) -> dict[str, Any] | None:
        """``Memory.document``: one document with its passages in order, or None when it is unknown."""
        try:
            result: dict[str, Any] = self._request("GET", f"{self._ns}/documents/{quote(doc_id, safe='')}")
        except _NotFound:
            return None
        return result

    def cypher(self, query: str, params: dict[str, Any] | None = None, *, limit: int | None = None,
               timeout: float | None = None) -> dict[str, Any]:  # fmt: skip
        """The analyst's read-only Cypher on the server (admin token only): ``{columns, rows, truncated, ...}``
        as ``engramdb cypher --json`` gives them; a refused query is an InputError naming the clause."""
        body: dict[str, Any] = {"query": query, "params": params or {}}
        if limit is not None:
            body["limit"] = limit
        if timeout is not None:
            body["timeout"] = timeout
        result: dict[str, Any] = self._request("POST", f"{self._ns}/cypher", json=body)
        return result

    def stats(self) -> dict[str, Any]:
        """Node, relationship and vector counts of the namespace, and its documents by status."""
        result: dict[str, Any] = self._request("GET", f"{self._ns}/stats")
        return result

    def close(self) -> None:
        """Close the HTTP connections (the server and its memory stay up)."""
        self._http.close()

    def __enter__(self) -> RemoteMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RemoteMemory({self.url!r}, namespace={self.namespace!r})"


def connect(url: str = DEFAULT_URL, token: str | None = None, namespace: str = "default",
            **options: Any) -> RemoteMemory:  # fmt: skip
    """A :class:`RemoteMemory` on ``url``'s namespace; ``options`` are its timeouts (see its constructor).

    Nothing is sent until the first call, so a server that is down shows up there, as a ServerError."""
    return RemoteMemory(url, token, namespace, **options)


def _documents(source: Any) -> list[Any]:
    """The request's ``documents``: texts and document dicts as given, Documents as dicts (with their
    Markdown sections, so the server computes the same id and content hash), one or a list of them."""
    from engramdb.ingestion.documents import Document

    items = [source] if isinstance(source, (str, dict, Document)) else source
    if not isinstance(items, (list, tuple)):
        raise InputError(f"cannot send a {type(source).__name__} to the server: pass a text, a "
                         "{title, text, id?, metadata?} dict, or a list of them")  # fmt: skip
    out: list[Any] = []
    for item in items:
        if isinstance(item, Document):
            entry: dict[str, Any] = {"text": item.text, "title": item.title, "id": item.id,
                                     "source": item.source, "metadata": item.metadata}  # fmt: skip
            if item.sections:
                entry["sections"] = [
                    {"path": list(x.path), "text": x.text, "top": x.top} for x in item.sections
                ]
            out.append(entry)
        elif isinstance(item, (str, dict)):
            out.append(item)
        else:
            raise InputError(f"cannot send a {type(item).__name__} as a document: pass a text or a dict")
    return out


def _parts(documents: list[Any], max_bytes: int) -> list[list[Any]]:
    """``documents`` in consecutive parts of at most ``max_bytes`` of JSON each (a larger document alone)."""
    if not documents:
        return [documents]  # the server names the problem ("no documents given")
    parts: list[list[Any]] = []
    size = 0
    for item in documents:
        length = len(json.dumps(item, default=str)) + 2
        if not parts or (size + length > max_bytes and parts[-1]):
            parts.append([])
            size = 0
        parts[-1].append(item)
        size += length
    return parts


def _add_report(total: IngestReport, data: dict[str, Any]) -> None:
    """Add one job's report (its JSON) into ``total``: counts summed, lists joined."""
    for f in fields(total):
        value = data.get(f.name)
        if value is None:
            continue
        current = getattr(total, f.name)
        if isinstance(current, list):
            current.extend(tuple(v) if isinstance(v, list) else v for v in value)
        elif isinstance(current, dict):
            for key, seconds in value.items():
                current[key] = current.get(key, 0.0) + seconds
        else:
            setattr(total, f.name, current + value)


def _error_of(response: httpx.Response) -> EngramError:
    """The exception for an error response: its JSON ``{"error": {"code", "message"}}`` when it has one."""
    status = response.status_code
    try:
        error = response.json()["error"]
        code, message = str(error["code"]), str(error["message"])
    except (ValueError, KeyError, TypeError):
        code, message = "http_error", f"HTTP {status}: {response.text[:200] or response.reason_phrase}"
    if status == 401:
        return ServerError(f"the engramdb server refused the token ({message}); pass token= or set "
                           f"{TOKEN_ENV} (`engramdb token show` on the server)", status, code)  # fmt: skip
    if status == 403:
        return ServerError(f"the engramdb server refused: {message}", status, code)
    if status == 404 and code == "document_not_found":
        return _NotFound(message, status, code)
    if status < 500:
        return RequestError(message, status, code)
    return ServerError(f"the engramdb server failed: {message}", status, code)

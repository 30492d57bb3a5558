"""The server's writer: ingest jobs and deletes, one at a time, on one thread.

Why one writer: the ingest pipeline keeps per-memory state while it writes
(the entity resolver of a namespace's ``Ingestor``), and two writers in one
namespace would also race on which version of a document lands. So every write
(an ingest job, a delete) goes through one FIFO queue served by one thread,
while reads (asks, stats, listings) run beside it on the ask pool. A job runs
to its end whether or not the client that started it is still connected; its
record (state, progress, report) stays in process memory for later polls.

Stopping: jobs still queued are marked failed without running; the running one
is interrupted at its next progress callback (after a document batch or a part
of at most 128 chunks has landed), which leaves its unfinished documents
``pending``, so ingesting them again resumes where it stopped.

Records: each job is also kept in Neo4j (:class:`JobStore`, ``cypher/server/``)
as it changes (progress at most once a second), so ``GET /v1/jobs/{id}`` still
answers after a restart, and a job whose server was killed is found at the next
start of a server of the same data home and marked failed as interrupted.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

if TYPE_CHECKING:
    from pathlib import Path

    from neo4j import Driver

    from engramdb.ingestion.documents import Document
    from engramdb.ingestion.pipeline import PartProgress
    from engramdb.platform.interfaces.memory import Memory

log = logging.getLogger("engramdb.server")
JobState = Literal["queued", "running", "done", "failed"]
T = TypeVar("T")
#: Finished jobs kept for polling; past this the oldest finished ones are forgotten.
FINISHED_JOBS_KEPT = 1000
#: Seconds between saves of a running job's progress to its record.
PROGRESS_SAVE_SECONDS = 1.0
INTERRUPTED = (
    "interrupted: the server stopped (killed or crashed) before this job ended; submit the documents "
    "again to resume (finished documents are kept)"
)
HOME_ID_FILE = "id"


class ServerStopping(Exception):
    """Raised inside a running ingest (from its progress callback) when the server is stopping."""


@dataclass
class Job:
    """One ingest job: what the client polls with ``GET /v1/jobs/{id}``."""

    id: str
    namespace: str
    documents_total: int
    state: JobState = "queued"
    documents_done: int = 0
    chunks_done: int = 0
    chunks_total: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)
    report: dict[str, Any] | None = None
    error: str | None = None
    created: float = field(default_factory=time.time)
    started: float | None = None
    finished: float | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if data["error"] is None:
            del data["error"]
        return data


def home_id(home: Path) -> str:
    """A stable id of the data home (``<home>/server/id``): whose jobs a restarted server may mark."""
    from engramdb.platform.interfaces.server_tokens import server_dir

    path = server_dir(home) / HOME_ID_FILE
    try:
        value = path.read_text().strip()
    except FileNotFoundError:
        value = ""
    if not value:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        value = uuid.uuid4().hex
        tmp = path.with_name(f".{HOME_ID_FILE}.{os.getpid()}.tmp")
        tmp.write_text(value + "\n")
        os.replace(tmp, path)
    return value


class JobStore:
    """Job records in Neo4j: one ``EngramJob`` node per job, written as the job changes.

    A failed save is logged and otherwise ignored: the job itself matters more than its record,
    and the in-memory record still answers polls while this process lives.
    """

    def __init__(self, driver: Driver, database: str, home: str) -> None:
        from engramdb.platform import cypher_files

        self.driver, self.database, self.home_id = driver, database, home
        self._query = cypher_files.query
        with driver.session(database=database) as session:
            for statement in cypher_files.statements("server/schema"):
                session.run(statement).consume()

    def _run(self, name: str, **params: Any) -> list[dict[str, Any]]:
        records, _, _ = self.driver.execute_query(self._query(name), params, database_=self.database)
        return [dict(r) for r in records]

    def save(self, job: Job) -> None:
        data = job.to_dict()
        record = {k: v for k, v in data.items() if k not in ("failures", "report", "namespace")}
        record |= {"job_namespace": job.namespace, "home_id": self.home_id,
                   "failures_json": json.dumps(data["failures"]), "report_json": json.dumps(data["report"]),
                   "error": job.error}  # fmt: skip
        try:
            self._run("server/save_job", job=record)
        except Exception:  # noqa: BLE001 - see the class docstring
            log.warning("could not save the record of job %s", job.id, exc_info=True)

    def get(self, job_id: str) -> dict[str, Any] | None:
        rows = self._run("server/get_job", id=job_id)
        return _from_record(rows[0]["job"]) if rows else None

    def recent(self, namespaces: list[str] | None, limit: int) -> list[dict[str, Any]]:
        return [
            _from_record(r["job"]) for r in self._run("server/list_jobs", namespaces=namespaces, limit=limit)
        ]

    def interrupt_unfinished(self) -> list[str]:
        """Mark this home's jobs left queued or running by a server that died as failed; their ids."""
        rows = self._run("server/interrupt_jobs", home_id=self.home_id, error=INTERRUPTED, now=time.time())
        return [r["id"] for r in rows]

    def forget_old(self, keep: int = FINISHED_JOBS_KEPT) -> None:
        self._run("server/forget_jobs", keep=keep)


def _from_record(record: dict[str, Any]) -> dict[str, Any]:
    """A stored record in the shape of :meth:`Job.to_dict`."""
    data = {f: record.get(f) for f in Job.__dataclass_fields__}
    data["namespace"] = record.get("job_namespace")
    data["failures"] = [tuple(x) for x in json.loads(record.get("failures_json") or "[]")]
    data["report"] = json.loads(record.get("report_json") or "null")
    if data.get("error") is None:
        data.pop("error", None)
    return data


class Writer:
    """One thread that runs every write in arrival order, and the records of ingest jobs."""

    def __init__(self, store: JobStore | None = None) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="engramdb-writer")
        self._lock = threading.RLock()  # reentrant: a future already done runs its callback at once
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._outstanding: set[Future[Any]] = set()
        self._stopping = threading.Event()
        self.store = store

    def _save(self, job: Job) -> None:
        if self.store is not None:
            self.store.save(job)

    def recent(self, namespaces: list[str] | None, limit: int) -> list[dict[str, Any]]:
        """The newest jobs (this process's and recorded ones), newest first."""
        with self._lock:
            live = {j.id: j.to_dict() for j in self._jobs.values()
                    if namespaces is None or j.namespace in namespaces}  # fmt: skip
        stored = self.store.recent(namespaces, limit) if self.store is not None else []
        merged = {**{j["id"]: j for j in stored}, **live}
        return sorted(merged.values(), key=lambda j: j["created"], reverse=True)[:limit]

    # Jobs -------------------------------------------------------------------
    def submit_ingest(self, memory: Memory, documents: Sequence[Document]) -> Job:
        """Queue an ingest of ``documents`` into ``memory``; returns the job (state ``queued``)."""
        job = Job(id=uuid.uuid4().hex, namespace=memory.namespace, documents_total=len(documents))
        with self._lock:  # the same lock as stop(): nothing is queued once stopping has begun
            self._refuse_if_stopping()
            self._jobs[job.id] = job
            self._forget_old_jobs()
        self._save(job)
        with self._lock:
            self._refuse_if_stopping()
            self._track(self._pool.submit(self._run_ingest, job, memory, list(documents)))
        return job

    def _track(self, future: Future[T]) -> Future[T]:
        """Remember ``future`` until it ends, so :meth:`stop` can wait for whatever is running."""
        with self._lock:
            self._outstanding.add(future)
        future.add_done_callback(self._untrack)
        return future

    def _untrack(self, future: Future[Any]) -> None:
        with self._lock:
            self._outstanding.discard(future)

    def job(self, job_id: str, *, stored: bool = True) -> dict[str, Any] | None:
        """A snapshot of a job's record (taken under the lock, so never half-updated), else its stored
        record (a job of an earlier run, or of another server on the same Neo4j; not with
        ``stored=False``, for callers on the event loop), else None."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is not None:
                return job.to_dict()
        return self.store.get(job_id) if stored and self.store is not None else None

    def _forget_old_jobs(self) -> None:
        finished = [j.id for j in self._jobs.values() if j.state in ("done", "failed")]
        for job_id in finished[: max(0, len(finished) - FINISHED_JOBS_KEPT)]:
            del self._jobs[job_id]

    def _run_ingest(self, job: Job, memory: Memory, documents: list[Document]) -> None:
        with self._lock:
            if self._stopping.is_set():
                self._finish(job, "failed", error="the server stopped before this job ran")
                return
            job.state, job.started = "running", time.time()
        self._save(job)
        log.info("job %s: ingesting %d documents into %r", job.id, len(documents), job.namespace)
        saved = float("-inf")  # the first finished batch is saved at once, later ones at most once a second

        def save_progress() -> None:
            nonlocal saved
            if time.monotonic() - saved >= PROGRESS_SAVE_SECONDS:
                saved = time.monotonic()
                self._save(job)

        def progress(n: int) -> None:
            with self._lock:
                job.documents_done += n
            save_progress()
            self._check_stopping()

        def on_part(part: PartProgress) -> None:
            with self._lock:
                job.chunks_done, job.chunks_total = part.chunks_done, part.chunks_total
            save_progress()
            self._check_stopping()

        try:
            report = memory.ingest(documents, progress=progress, on_part=on_part)
        except ServerStopping:
            log.warning("job %s interrupted: the server is stopping", job.id)
            with self._lock:
                self._finish(job, "failed", error="interrupted: the server stopped; submit the documents "
                             "again to resume (finished documents are kept)")  # fmt: skip
            return
        except Exception as exc:  # the job's record carries the reason; the log keeps the traceback
            log.exception("job %s failed", job.id)
            with self._lock:
                self._finish(job, "failed", error=job_error(exc))
            return
        with self._lock:
            job.failures = [tuple(f) for f in report.failures]  # type: ignore[misc]
            job.report = asdict(report)
            job.documents_done = job.documents_total
            self._finish(job, "done")
        log.info("job %s done: %d ingested, %d unchanged, %d failed in %.1f s", job.id, report.ingested,
                 report.skipped, report.failed, report.seconds)  # fmt: skip

    def _finish(self, job: Job, state: JobState, error: str | None = None) -> None:
        job.state, job.error, job.finished = state, error, time.time()
        self._save(job)

    def _check_stopping(self) -> None:
        if self._stopping.is_set():
            raise ServerStopping("the server is stopping")

    def _refuse_if_stopping(self) -> None:
        if self._stopping.is_set():
            raise ServerStopping("the server is stopping: no new writes are accepted")

    # Other writes -------------------------------------------------------------
    def run(self, work: Callable[[], T]) -> Future[T]:
        """Run ``work`` (a delete) on the writer thread after the writes queued before it."""
        with self._lock:
            self._refuse_if_stopping()
            return self._track(self._pool.submit(work))

    def stop(self, grace: float) -> bool:
        """Fail queued jobs, interrupt the running one, and wait up to ``grace`` seconds for the
        writer thread; True when it ended (a write that outlives the grace is only abandoned)."""
        with self._lock:
            self._stopping.set()
            pending = list(self._outstanding)
            for job in self._jobs.values():
                if job.state == "queued":
                    self._finish(job, "failed", error="the server stopped before this job ran")
        self._pool.shutdown(wait=False, cancel_futures=True)
        _, not_done = wait([f for f in pending if not f.cancelled()], timeout=grace)
        return not not_done


def job_error(exc: BaseException) -> str:
    """A failed job's reason as a client may see it: engramdb's own message, else the error's type only."""
    from engramdb.platform.errors import EngramError, unreachable_store

    store = unreachable_store(exc)
    if store is not None:
        return f"{'Neo4j' if store == 'neo4j' else 'the vector store'} became unreachable; submit again to resume"
    if isinstance(exc, EngramError):
        return str(exc)
    return f"internal error ({type(exc).__name__}); see the server log"

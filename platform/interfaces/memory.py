"""The SDK facade: ``Memory(namespace=...)`` with ingest, ask, delete, documents and stats.

A Memory owns one Neo4j driver and one vector store, both opened lazily, and
applies the schema on first use, so ``Memory().stats()`` works on a fresh
machine with no set-up step.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from neo4j import Driver

from engramdb.platform.config import Settings, validate_namespace
from engramdb.platform.embedders import Embedder, make_embedder
from engramdb.platform.errors import InputError
from engramdb.platform.graph import Graph, apply_schema, connect
from engramdb.platform.shared_stores import acquire_vector_store
from engramdb.platform.vectors import VectorStore

#: What ingest marks a document as: written and indexed, in progress (or interrupted), or failed.
DOCUMENT_STATUSES = ("done", "pending", "failed")
#: Cypher's LIMIT takes no null: "no limit" is a count no namespace reaches.
NO_LIMIT = 2**62
#: Built strategies kept per Memory (one per strategy and option set); the least recently used goes first.
STRATEGY_CACHE_SIZE = 32


class opened_once(cached_property):  # noqa: N801 - used as a decorator, like cached_property
    """``cached_property`` whose first computation is serialised per instance.

    Why: Python 3.12 dropped cached_property's lock, so two threads touching ``memory.vectors``
    at once could each open the embedded store (the second is refused: one opener per folder)
    or each open a Neo4j driver (one leaks). The instance's reentrant ``_open_lock`` makes the
    first use build the value once; later reads are plain attribute reads, without the lock.
    """

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if instance is None:
            return self
        cache = instance.__dict__
        if self.attrname in cache:
            return cache[self.attrname]
        with instance._open_lock:  # type: ignore[attr-defined]
            if self.attrname in cache:
                return cache[self.attrname]
            return super().__get__(instance, owner)


if TYPE_CHECKING:
    from engramdb.ingestion.documents import Document
    from engramdb.ingestion.loaders import LoadResult
    from engramdb.ingestion.pipeline import (
        DeleteReport,
        Ingestor,
        IngestReport,
        PartCallback,
        ProgressCallback,
    )
    from engramdb.ingestion.stages.base import StageContext, StageReport
    from engramdb.retrieval.decomposition import Decomposition
    from engramdb.retrieval.rerankers import Reranker
    from engramdb.retrieval.results import AskResult
    from engramdb.retrieval.strategy import AskContext, AskStrategy


class Memory:
    """Structured memory in one namespace of one Neo4j + Qdrant pair.

    Thread-safe: one Memory may be shared by threads. Stores and models open once on first use
    (:class:`opened_once`); built strategies are cached under a lock (at most
    ``STRATEGY_CACHE_SIZE``), so concurrent asks reuse one; ``ingest``, ``delete`` and
    ``delete_many`` take a write lock, so writes from several threads run one after another while
    asks, ``stats`` and ``documents`` run beside them.
    """

    def __init__(
        self,
        namespace: str | None = None,
        settings: Settings | None = None,
        *,
        chat_model: BaseChatModel | None = None,
        embedder: Embedder | None = None,
        reranker: Reranker | None = None,
        vectors: VectorStore | None = None,
    ) -> None:
        """``chat_model``, ``embedder`` and ``reranker`` replace the configured ones: any langchain-core
        chat model (a local Ollama or vLLM model included) extracts, decomposes and answers. ``vectors``
        is an open vector store to use instead of the configured one (closed with this Memory)."""
        self.settings = settings or Settings()
        self.namespace = validate_namespace(namespace or self.settings.namespace)
        self._chat_model = chat_model
        self._embedder = embedder
        self._reranker = reranker
        self._vectors = vectors
        self._strategies: OrderedDict[tuple[str, tuple[tuple[str, str], ...]], AskStrategy] = OrderedDict()
        self._open_lock = threading.RLock()
        self._strategies_lock = threading.Lock()
        self._write_lock = threading.RLock()

    # Stores, opened on first use -----------------------------------------
    @opened_once
    def driver(self) -> Driver:
        driver = connect(self.settings)
        apply_schema(driver, self.settings.neo4j_database)
        return driver

    @opened_once
    def graph(self) -> Graph:
        return Graph(self.driver, self.namespace, self.settings.neo4j_database)

    @opened_once
    def vectors(self) -> VectorStore:
        return self._vectors if self._vectors is not None else acquire_vector_store(self.settings)

    @opened_once
    def embedder(self) -> Embedder:
        return self._embedder if self._embedder is not None else make_embedder(self.settings)

    @opened_once
    def ingestor(self) -> Ingestor:
        from engramdb.ingestion.extraction.extractors import make_extractor
        from engramdb.ingestion.pipeline import Ingestor
        from engramdb.ingestion.stages.base import make_stage

        extractor = make_extractor(self.settings, self.namespace, self.chat_model)
        stages = [make_stage(name, self.stage_context) for name in self.stage_names]
        return Ingestor(
            self.graph, self.vectors, self.embedder, extractor,
            batch_size=self.settings.ingest_batch_size, cache=getattr(extractor, "cache", None),
            entity_merge_threshold=self.settings.entity_merge_threshold, stages=stages,
            claim_lease_seconds=self.settings.ingest_claim_seconds,
        )  # fmt: skip

    @property
    def stage_names(self) -> list[str]:
        """The memory stages ingest runs here: the ``stages`` setting, else every registered one."""
        from engramdb.ingestion.stages.base import stage_names

        return list(self.settings.stages) if self.settings.stages is not None else stage_names()

    @opened_once
    def stage_context(self) -> StageContext:
        from engramdb.ingestion.stages.base import StageContext

        return StageContext(self.graph, self.vectors, self.embedder, self.chat_model)

    def index(
        self, stages: Sequence[str] | None = None, *, progress: Callable[[str, int], None] | None = None
    ) -> list[StageReport]:
        """Bring this namespace's memory up to date for ``stages`` (default: every configured stage),
        without re-extracting: chunks a stage has not indexed (memory built before it existed, or by an
        older version of it) are indexed now."""
        from engramdb.ingestion.stages.base import make_stage

        reports = []
        for name in stages or self.stage_names:
            stage = make_stage(name, self.stage_context)
            reports.append(
                stage.index_namespace(progress=(lambda n, s=name: progress(s, n)) if progress else None)
            )
        return reports

    def missing_stages(self) -> dict[str, int]:
        """Per configured stage, how many chunks it has not indexed yet (0 everywhere: up to date)."""
        from engramdb.ingestion.stages.base import make_stage

        return {name: make_stage(name, self.stage_context).missing() for name in self.stage_names}

    @opened_once
    def chat_model(self) -> BaseChatModel | None:
        """The chat model given to the constructor, else the configured ``llm`` (None offline)."""
        from engramdb.platform.llm import make_chat_model

        return self._chat_model if self._chat_model is not None else make_chat_model(self.settings)

    @opened_once
    def reranker(self) -> Reranker:
        from engramdb.retrieval.rerankers import make_reranker

        return self._reranker if self._reranker is not None else make_reranker(self.settings)

    def ask_context(
        self, *, chat_model: BaseChatModel | None = None, decomposition: str = "auto"
    ) -> AskContext:
        """What strategies run on: this memory's stores and models.

        ``chat_model`` (default: this memory's) decomposes and answers;
        ``decomposition`` is ``auto`` (the LLM when there is one, else the offline
        rules), ``llm`` or ``offline``.
        """
        from engramdb.platform.errors import ConfigError
        from engramdb.platform.storage import QA_COLLECTION
        from engramdb.retrieval.strategy import AskContext

        if decomposition not in ("auto", "llm", "offline"):
            raise InputError(f"decomposition must be auto, llm or offline, not {decomposition!r}")
        model = chat_model if chat_model is not None else self.chat_model
        if decomposition == "llm" and model is None:
            raise ConfigError(
                "LLM decomposition needs an LLM: set ENGRAMDB_LLM (e.g. openai:gpt-4o-mini) and its key"
            )
        self.vectors.ensure_collection(QA_COLLECTION, self.embedder.dim)
        return AskContext(
            self.graph, self.vectors, self.embedder, self.reranker, chat_model=model,
            decomposition=decomposition, recipe_overrides=self.settings.ask,
        )  # fmt: skip

    def strategy(
        self, name: str = "chain", *, chat_model: BaseChatModel | None = None, decomposition: str = "auto",
        **options: Any,
    ) -> AskStrategy:  # fmt: skip
        """A ready strategy over this memory; ``options`` override its recipe (see ``engramdb config show``)."""
        from engramdb.retrieval.strategy import make_strategy

        return make_strategy(
            name, self.ask_context(chat_model=chat_model, decomposition=decomposition), **options
        )

    # Operations -------------------------------------------------------------
    def ask(
        self,
        question: str,
        *,
        strategy: str = "chain",
        decomposition: Decomposition | list[list[str]] | None = None,
        trace: bool = False,
        budget: int | None = None,
        **options: Any,
    ) -> AskResult:
        """Answer from memory with a registered strategy (``chain`` by default; see
        :func:`engramdb.retrieval.strategy.strategy_names`). ``budget`` caps the evidence at that
        many tokens (whole sentences; see :mod:`engramdb.retrieval.packing`). ``options`` override
        the strategy's recipe for this call; built strategies are reused across calls."""
        if budget is not None:
            options["budget"] = budget
        from engramdb.platform.text_safety import require_unicode

        if isinstance(question, str):
            require_unicode(question, "the question")
        if isinstance(decomposition, list):
            for sequence in decomposition:
                for sub in sequence if isinstance(sequence, list) else []:
                    if isinstance(sub, str):
                        require_unicode(sub, "a sub-question of the decomposition")
        return self._built_strategy(strategy, options).ask(question, decomposition=decomposition, trace=trace)

    def _built_strategy(self, name: str, options: dict[str, Any]) -> AskStrategy:
        """The cached strategy for ``name`` and ``options``, built at most once however many threads ask."""
        key = (name, tuple(sorted((k, repr(v)) for k, v in options.items())))
        with self._strategies_lock:
            built = self._strategies.get(key)
            if built is None:
                built = self._strategies[key] = self.strategy(name, **options)
                while len(self._strategies) > STRATEGY_CACHE_SIZE:
                    self._strategies.popitem(last=False)
            else:
                self._strategies.move_to_end(key)
            return built

    def ingest(
        self,
        source: str | Path | Document | dict[str, Any] | Iterable[Document | dict[str, Any] | str],
        *,
        progress: ProgressCallback | None = None,
        on_part: PartCallback | None = None,
        strict: bool = False,
    ) -> IngestReport:
        """Remember documents: a path (file, folder, JSON corpus), a text, a dict, or many of those
        (or the ``LoadResult`` of ``engramdb.ingestion.loaders.scan_path``).

        Unchanged documents are skipped, changed ones replace their old memory,
        and an interrupted ingest resumes where it stopped when run again.
        In a folder, a file that cannot be read becomes a ``failed`` document
        (``report.failures``) and an unsupported one is skipped
        (``report.skipped_files``) while the rest are ingested; ``strict=True``
        ingests nothing when any file cannot be read.
        ``progress`` advances per document; ``on_part`` reports chunks written
        within a batch, which is the only visible progress while one long
        document (a book) is being ingested.
        """
        loaded = to_load_result(source)
        if strict:
            loaded.raise_problems()
        with self._write_lock:
            report = self.ingestor.ingest(
                loaded.documents, progress=progress, on_part=on_part, failed_files=loaded.failed
            )
        report.skipped_files.extend((f.path, f.reason) for f in loaded.skipped)
        return report

    def delete(self, doc_id: str) -> DeleteReport:
        """Forget one document: its chunks, verb phrases, QA edges and vectors, cached
        extractions, and every entity no other document mentions."""
        return self.delete_many([doc_id])[0]

    def delete_many(self, doc_ids: Iterable[str]) -> list[DeleteReport]:
        """Forget several documents, all or none: if any id is unknown, nothing is deleted
        and the error names every unknown id (a typo must not leave half a cleanup done)."""
        wanted = [doc_ids] if isinstance(doc_ids, str) else list(dict.fromkeys(doc_ids))
        if not wanted:
            return []
        with self._write_lock:
            return self._delete_many(wanted)

    def _delete_many(self, wanted: list[str]) -> list[DeleteReport]:
        from engramdb.ingestion.claims import holder_is_gone

        rows = self.document_status(wanted)
        missing = [doc_id for doc_id in wanted if doc_id not in rows]
        if missing:
            raise InputError(_missing_documents_message(missing, len(wanted), self.namespace))
        # a document another writer is ingesting right now would come back half-written
        held = {
            d: r["claimed_by"]
            for d, r in rows.items()
            if r["claimed_by"] and not holder_is_gone(r["claimed_by"])
        }
        if held:
            names = ", ".join(f"{d!r} (by {holder})" for d, holder in held.items())
            raise InputError(f"being ingested right now: {names}; nothing was deleted. "
                             "Delete once that ingest has ended.")  # fmt: skip
        from engramdb.retrieval.hypergraph.memory import forget_document

        reports = []
        for doc_id in wanted:
            forget_document(self.graph, doc_id)  # kept hypergraph runs let go of the document's chunks first
            report = self.ingestor.delete(doc_id)
            if report is None:  # deleted by someone else since the check above
                raise InputError(_missing_documents_message([doc_id], 1, self.namespace))
            reports.append(report)
        return reports

    def stats(self) -> dict[str, Any]:
        """Node, relationship and vector counts of this namespace, and its documents by status."""
        from engramdb.platform.storage import CHUNK_COLLECTION, ENTITY_COLLECTION, QA_COLLECTION

        nodes = self.graph.read("traversals/namespace_counts")[0]
        edges = self.graph.read("traversals/edge_counts")[0]
        vectors = {}
        for key, collection in (("qa_vectors", QA_COLLECTION), ("chunk_vectors", CHUNK_COLLECTION),
                                ("entity_vectors", ENTITY_COLLECTION)):  # fmt: skip
            self.vectors.ensure_collection(collection, self.embedder.dim)
            vectors[key] = self.vectors.count(collection, self.namespace)
        statuses = self.document_counts()
        return {"namespace": self.namespace, **nodes, **edges, **vectors,
                "documents_done": statuses.get("done", 0), "documents_pending": statuses.get("pending", 0),
                "documents_failed": statuses.get("failed", 0)}  # fmt: skip

    def document_counts(self) -> dict[str, int]:
        """How many documents of this namespace are done, pending or failed (a status with
        none is absent); empty when the namespace holds no documents."""
        return {r["status"]: r["count"] for r in self.graph.read("traversals/document_status_counts")}

    def documents(self, status: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        """The documents of this namespace ordered by id, as dicts with id, title, status,
        chunks, qa_pairs and error (why ingest failed, else None); only those of ``status``
        when given, at most ``limit``."""
        if status is not None and status not in DOCUMENT_STATUSES:
            raise InputError(f"unknown document status {status!r}: use one of {', '.join(DOCUMENT_STATUSES)}")
        if limit is not None and limit < 0:
            raise InputError(f"limit must be 0 or more, not {limit}")
        return self.graph.read("traversals/list_documents", status=status,
                               limit=NO_LIMIT if limit is None else limit)  # fmt: skip

    def other_namespaces(self) -> dict[str, int]:
        """Every other namespace that holds documents, with its document count: where to look
        when this one is empty (a fresh ``default`` after ingesting under another name)."""
        return {r["namespace"]: r["documents"] for r in self.graph.read("traversals/other_namespaces")}

    def document(self, doc_id: str) -> dict[str, Any] | None:
        """One document as stored: id, title, status, source and its passages in order (each
        ``{title, text}``), or None when this namespace has no document ``doc_id``."""
        rows = self.graph.read("traversals/document_passages", doc_id=doc_id)
        return rows[0] if rows else None

    def document_status(self, doc_ids: list[str]) -> dict[str, dict[str, Any]]:
        """Status, content hash, error and live claim (the writer ingesting it) of documents by id."""
        return {r["id"]: r for r in self.graph.read("traversals/get_documents", ids=doc_ids)}

    def close(self) -> None:
        """Close the stores (the local Neo4j server keeps running; stop it with the CLI)."""
        if "driver" in self.__dict__:
            self.driver.close()
            del self.__dict__["driver"]
            self.__dict__.pop("graph", None)
        self.__dict__.pop("ingestor", None)
        self.__dict__.pop("stage_context", None)
        with self._strategies_lock:
            self._strategies.clear()
        if "vectors" in self.__dict__:
            self.vectors.close()
            del self.__dict__["vectors"]
        self._vectors = None  # a store given to the constructor is closed with this Memory

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _missing_documents_message(missing: list[str], asked: int, namespace: str) -> str:
    names = ", ".join(repr(doc_id) for doc_id in missing)
    noun = "document" if len(missing) == 1 else "documents"
    message = f"no {noun} {names} in namespace {namespace!r}"
    return message if asked == 1 else f"{message}; none of the {asked} documents was deleted"


def to_documents(source: object) -> list[Document]:
    """Normalise what ``Memory.ingest`` accepts into validated Documents (any bad file is an error)."""
    loaded = to_load_result(source)
    loaded.raise_problems()
    return loaded.documents


def to_load_result(source: object) -> LoadResult:
    """What ``Memory.ingest`` accepts, read: documents, and the files of folders that failed or were skipped."""
    from engramdb.ingestion.documents import Document, make_document
    from engramdb.ingestion.loaders import LoadResult, scan_path

    if isinstance(source, LoadResult):
        return source
    if isinstance(source, Document):
        return LoadResult([source])
    if isinstance(source, Path):
        return scan_path(source)
    if isinstance(source, str):
        if _looks_like_path(source):
            return scan_path(source)  # a missing file is reported, not ingested as text
        return LoadResult([make_document(source)])
    if isinstance(source, dict):
        return LoadResult([_from_dict(source)])
    if isinstance(source, Iterable):
        out = LoadResult()
        for item in source:
            part = to_load_result(item)
            out.documents.extend(part.documents)
            out.failed.extend(part.failed)
            out.skipped.extend(part.skipped)
        return out
    raise InputError(f"cannot ingest a {type(source).__name__}: pass a path, text, dict or Document")


def _looks_like_path(text: str) -> bool:
    from engramdb.ingestion.loaders import SUPPORTED_SUFFIXES

    if text == "-" or (len(text) < 4096 and "\n" not in text and Path(text).exists()):
        return True
    return not any(ch.isspace() for ch in text) and (
        "/" in text or Path(text).suffix.lower() in SUPPORTED_SUFFIXES
    )


def _from_dict(item: dict[str, Any]) -> Document:
    from engramdb.ingestion.documents import make_document

    text = item.get("text")
    if not isinstance(text, str):
        raise InputError("a document dict needs a 'text' string")
    return make_document(
        text, title=item.get("title"), id=item.get("id"), source=str(item.get("source") or ""),
        metadata=item.get("metadata"),
    )  # fmt: skip

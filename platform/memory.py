"""The SDK facade: ``Memory(namespace=...)`` with ingest, ask, delete, documents and stats.

A Memory owns one Neo4j driver and one vector store, both opened lazily, and
applies the schema on first use, so ``Memory().stats()`` works on a fresh
machine with no set-up step.
"""

from __future__ import annotations

from collections.abc import Iterable
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

if TYPE_CHECKING:
    from engramdb.ingestion.documents import Document
    from engramdb.ingestion.pipeline import DeleteReport, Ingestor, IngestReport, ProgressCallback
    from engramdb.retrieval.ask import Asker, AskRecipe
    from engramdb.retrieval.decomposition import Decomposition
    from engramdb.retrieval.results import AskResult


class Memory:
    """Structured memory in one namespace of one Neo4j + Qdrant pair."""

    def __init__(self, namespace: str | None = None, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self.namespace = validate_namespace(namespace or self.settings.namespace)

    # Stores, opened on first use -----------------------------------------
    @cached_property
    def driver(self) -> Driver:
        driver = connect(self.settings)
        apply_schema(driver, self.settings.neo4j_database)
        return driver

    @cached_property
    def graph(self) -> Graph:
        return Graph(self.driver, self.namespace, self.settings.neo4j_database)

    @cached_property
    def vectors(self) -> VectorStore:
        return acquire_vector_store(self.settings)

    @cached_property
    def embedder(self) -> Embedder:
        return make_embedder(self.settings)

    @cached_property
    def ingestor(self) -> Ingestor:
        from engramdb.ingestion.extractors import make_extractor
        from engramdb.ingestion.pipeline import Ingestor

        extractor = make_extractor(self.settings, self.namespace)
        return Ingestor(
            self.graph, self.vectors, self.embedder, extractor,
            batch_size=self.settings.ingest_batch_size, cache=getattr(extractor, "cache", None),
            entity_merge_threshold=self.settings.entity_merge_threshold,
        )  # fmt: skip

    @cached_property
    def asker(self) -> Asker:
        return self.make_asker()

    def make_asker(
        self,
        recipe: AskRecipe | None = None,
        *,
        chat_model: BaseChatModel | None = None,
        decomposition: str = "auto",
    ) -> Asker:
        """An Asker wired to this memory.

        ``chat_model`` (default: the configured LLM, if any) decomposes and
        answers; ``decomposition`` is ``auto`` (the LLM when there is one, else
        the offline rules), ``llm`` or ``offline``. Voyage reranks when a key is set.
        """
        from engramdb.platform.errors import ConfigError
        from engramdb.platform.llm import make_chat_model
        from engramdb.retrieval.answering import LLMAnswerer
        from engramdb.retrieval.ask import Asker
        from engramdb.retrieval.decomposition import LLMDecomposer, OfflineDecomposer
        from engramdb.retrieval.rerankers import OfflineReranker, VoyageReranker

        model = chat_model or make_chat_model(self.settings)
        if decomposition == "llm" and model is None:
            raise ConfigError(
                "LLM decomposition needs an LLM: set ENGRAMDB_LLM (e.g. openai:gpt-4o-mini) and its key"
            )
        use_llm = model is not None and decomposition in ("auto", "llm")
        key = self.settings.voyage_api_key
        reranker = (
            VoyageReranker(key.get_secret_value()) if key and key.get_secret_value() else OfflineReranker()
        )
        return Asker(
            self.graph, self.vectors, self.embedder, reranker,
            decomposer=LLMDecomposer(model) if use_llm else OfflineDecomposer(),  # type: ignore[arg-type]
            answerer=LLMAnswerer(model) if model else None,
            recipe=recipe,
        )  # fmt: skip

    # Operations -------------------------------------------------------------
    def ask(
        self,
        question: str,
        *,
        decomposition: Decomposition | list[list[str]] | None = None,
        trace: bool = False,
    ) -> AskResult:
        """Answer from memory: decomposition, chain beam search over QA pairs, a grounded answer or N/A."""
        from engramdb.ingestion.pipeline import QA_COLLECTION

        self.vectors.ensure_collection(QA_COLLECTION, self.embedder.dim)
        return self.asker.ask(question, decomposition, trace=trace)

    def ingest(
        self,
        source: str | Path | Document | dict[str, Any] | Iterable[Document | dict[str, Any] | str],
        *,
        progress: ProgressCallback | None = None,
    ) -> IngestReport:
        """Remember documents: a path (file, folder, JSON corpus), a text, a dict, or many of those.

        Unchanged documents are skipped, changed ones replace their old memory,
        and an interrupted ingest resumes where it stopped when run again.
        """
        return self.ingestor.ingest(to_documents(source), progress=progress)

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
        known = {r["id"] for r in self.graph.read("traversals/get_documents", ids=wanted)}
        missing = [doc_id for doc_id in wanted if doc_id not in known]
        if missing:
            raise InputError(_missing_documents_message(missing, len(wanted), self.namespace))
        reports = []
        for doc_id in wanted:
            report = self.ingestor.delete(doc_id)
            if report is None:  # deleted by someone else since the check above
                raise InputError(_missing_documents_message([doc_id], 1, self.namespace))
            reports.append(report)
        return reports

    def stats(self) -> dict[str, Any]:
        """Node, relationship and vector counts of this namespace, and its documents by status."""
        from engramdb.ingestion.pipeline import CHUNK_COLLECTION, ENTITY_COLLECTION, QA_COLLECTION

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

    def document_status(self, doc_ids: list[str]) -> dict[str, dict[str, Any]]:
        """Status, content hash and error of documents by id."""
        return {r["id"]: r for r in self.graph.read("traversals/get_documents", ids=doc_ids)}

    def close(self) -> None:
        """Close the stores (the local Neo4j server keeps running; stop it with the CLI)."""
        if "driver" in self.__dict__:
            self.driver.close()
            del self.__dict__["driver"]
            self.__dict__.pop("graph", None)
        self.__dict__.pop("ingestor", None)
        self.__dict__.pop("asker", None)
        if "vectors" in self.__dict__:
            self.vectors.close()
            del self.__dict__["vectors"]

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
    """Normalise what ``Memory.ingest`` accepts into validated Documents."""
    from engramdb.ingestion.documents import Document, make_document
    from engramdb.ingestion.loaders import load_path

    if isinstance(source, Document):
        return [source]
    if isinstance(source, Path):
        return load_path(source)
    if isinstance(source, str):
        if _looks_like_path(source):
            return load_path(source)  # a missing file is reported, not ingested as text
        return [make_document(source)]
    if isinstance(source, dict):
        return [_from_dict(source)]
    if isinstance(source, Iterable):
        docs: list[Document] = []
        for item in source:
            docs.extend(to_documents(item))
        return docs
    raise InputError(f"cannot ingest a {type(source).__name__}: pass a path, text, dict or Document")


def _looks_like_path(text: str) -> bool:
    if text == "-" or (len(text) < 4096 and "\n" not in text and Path(text).exists()):
        return True
    return not any(ch.isspace() for ch in text) and (
        "/" in text or Path(text).suffix.lower() in {".txt", ".md", ".markdown", ".json"}
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

"""Memory stages: the one extension point for what ingestion derives from documents.

The GSW (entities, verb phrases, QA pairs and their vectors) is the base every
method reads. Everything else a method needs (gists and facts, the chunk
network and clusters, ...) is a :class:`MemoryStage`: it owns its nodes,
relationships, Cypher (``cypher/<stage>/``) and vector collections, derives
them from chunks already written with their GSW, and forgets them when a
document is deleted.

Which chunks a stage has indexed is recorded on the chunk itself (a marker
``"<stage>@<version>"`` in ``Chunk.stages``), so ``engramdb index`` can bring
memory built before a stage existed up to date without re-extracting, a
changed stage version re-indexes, and a crash between a stage's write and its
marker only means the chunk is indexed again (stages write idempotently).
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from engramdb.platform.embedders import Embedder
from engramdb.platform.errors import InputError
from engramdb.platform.graph import Graph
from engramdb.platform.vectors import VectorStore

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel


@dataclass(frozen=True)
class StageChunk:
    """A chunk as a stage sees it (its GSW is in the graph, reachable by the chunk id)."""

    id: str
    doc_id: str
    title: str
    text: str
    position: int

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> StageChunk:
        """From a row of ``stages/chunks_missing_stage``."""
        return cls(row["id"], row["doc_id"], row["title"], row["text"], row["position"])


@dataclass
class StageContext:
    """The stores and models a stage may use; ``chat_model`` is None offline."""

    graph: Graph
    vectors: VectorStore
    embedder: Embedder
    chat_model: BaseChatModel | None = None
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def namespace(self) -> str:
        return self.graph.namespace


@dataclass
class StageReport:
    """What one stage run did (counts are of what was written)."""

    stage: str
    chunks: int = 0
    written: dict[str, int] = field(default_factory=dict)
    failures: list[tuple[str, str]] = field(default_factory=list)  # (chunk id, reason)
    seconds: float = 0.0

    def add(self, other: StageReport) -> None:
        self.chunks += other.chunks
        for key, value in other.written.items():
            self.written[key] = self.written.get(key, 0) + value
        self.failures.extend(other.failures)
        self.seconds += other.seconds


ProgressCallback = Callable[[int], None]


class MemoryStage(ABC):
    """One derived index over the GSW memory of a namespace.

    Subclasses set ``name`` (also their Cypher folder), ``version`` (bump when
    what the stage writes for the same chunk changes) and ``collections`` (the
    vector collections they own), and implement :meth:`index_chunks` and
    :meth:`delete_document`. A stage that works over the whole memory (e.g.
    clusters) may override :meth:`index_namespace`.
    """

    name: ClassVar[str]
    version: ClassVar[str] = "1"
    collections: ClassVar[tuple[str, ...]] = ()
    summary: ClassVar[str] = ""
    batch_size: ClassVar[int] = 256

    def __init__(self, context: StageContext) -> None:
        self.context = context
        for collection in self.collections:
            context.vectors.ensure_collection(collection, context.embedder.dim)

    @property
    def marker(self) -> str:
        return f"{self.name}@{self.version}"

    @abstractmethod
    def index_chunks(self, chunks: Sequence[StageChunk]) -> StageReport:
        """Derive this stage's memory for ``chunks`` (replacing what an earlier run wrote for them)."""

    @abstractmethod
    def delete_document(self, doc_id: str, chunk_ids: Sequence[str]) -> None:
        """Forget what this stage derived from one document; runs before its chunks are deleted, on
        its own thread beside the other stages' deletes (so it must not rely on theirs)."""

    # --------------------------------------------------------------- shared
    def run(self, chunks: Sequence[StageChunk]) -> StageReport:
        """Index ``chunks`` and mark them as indexed by this stage version (ingest calls this per batch)."""
        report = self.index_chunks(chunks)
        failed = {chunk_id for chunk_id, _ in report.failures}
        done = [c.id for c in chunks if c.id not in failed]
        if done:
            self.context.graph.write(
                "stages/mark_chunks", chunk_ids=done, stage=self.name, marker=self.marker
            )
        return report

    def missing(self) -> int:
        """Indexable chunks of the namespace this stage version has not indexed."""
        return int(self.context.graph.read("stages/count_missing_stage", marker=self.marker)[0]["missing"])

    def indexable_chunks(self) -> list[StageChunk]:
        """Every chunk of the namespace a stage can index, indexed or not (for rebuilds from outside:
        benchmarks and tests), up to a million; a marker no chunk carries makes every indexable chunk
        count as missing."""
        rows = self.context.graph.read(
            "stages/chunks_missing_stage", marker=f"{self.name}@-", limit=1_000_000
        )
        return [StageChunk.from_row(r) for r in rows]

    def stale(self) -> int:
        """Chunks indexed by another version of this stage (their memory was built differently)."""
        rows = self.context.graph.read("stages/count_stale_markers", stage=self.name, marker=self.marker)
        return int(rows[0]["stale"])

    def index_namespace(self, progress: ProgressCallback | None = None) -> StageReport:
        """Bring the whole namespace up to date: index every chunk that lacks this stage's marker."""
        total = StageReport(self.name)
        while True:
            rows = self.context.graph.read(
                "stages/chunks_missing_stage", marker=self.marker, limit=self.batch_size
            )
            if not rows:
                return total
            chunks = [StageChunk.from_row(r) for r in rows]
            report = self.run(chunks)
            total.add(report)
            if progress:
                progress(len(chunks))
            if report.failures and len(report.failures) == len(chunks):
                return total  # nothing of this batch could be indexed: stop instead of retrying forever


_REGISTRY: dict[str, type[MemoryStage]] = {}
#: Modules whose import registers the built-in stages (imported on first lookup).
BUILTIN_STAGE_MODULES: tuple[str, ...] = (
    "engramdb.ingestion.stages.gists",
    "engramdb.ingestion.stages.clusters",
)
_loaded = False


def register_stage(cls: type[MemoryStage]) -> type[MemoryStage]:
    """Class decorator: make a memory stage available by its ``name``."""
    existing = _REGISTRY.get(cls.name)
    if existing is not None and existing is not cls:
        raise ValueError(
            f"two memory stages are named {cls.name!r}: {existing.__module__} and {cls.__module__}"
        )
    _REGISTRY[cls.name] = cls
    return cls


def _load_builtins() -> None:
    global _loaded
    if not _loaded:
        for module in BUILTIN_STAGE_MODULES:
            importlib.import_module(module)
        _loaded = True


def stage_names() -> list[str]:
    """Every registered stage, in registration order."""
    _load_builtins()
    return list(_REGISTRY)


def make_stage(name: str, context: StageContext) -> MemoryStage:
    """Build stage ``name``; unknown names fail with the list of known ones."""
    _load_builtins()
    if name not in _REGISTRY:
        raise InputError(f"unknown memory stage {name!r}; known stages: {', '.join(_REGISTRY) or 'none'}")
    return _REGISTRY[name](context)

"""Extractors turn chunks into GSWs; ingestion does not care which one runs.

Both the offline rules and an LLM produce an :class:`Extraction` per chunk:
a validated GSW, or the reason there is none (which ingestion records on the
chunk instead of dropping it silently).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from langchain_core.language_models import BaseChatModel

from engramdb.ingestion.extraction.offline import ChunkText, OfflineExtractor
from engramdb.ingestion.gsw import GSW, Dropped
from engramdb.platform.config import Settings


@dataclass(frozen=True)
class Extraction:
    """One chunk's GSW or the reason there is none, with what producing it took.

    ``attempts`` counts model calls (retries and split pieces included),
    ``pieces`` how many parts the chunk was extracted in (more than one when a
    reply was cut off at the output cap), ``structured`` whether the provider's
    structured output was used. What the content rules dropped, and the reply
    keys outside the schema, travel on the GSW (:attr:`GSW.dropped`,
    :attr:`GSW.ignored_keys`) so a cached extraction keeps them too.
    """

    gsw: GSW | None
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cached: bool = False
    attempts: int = 0
    pieces: int = 1
    structured: bool = False

    @property
    def dropped(self) -> list[Dropped]:
        """Items the content rules removed from this chunk's extraction, with reasons."""
        return list(self.gsw.dropped) if self.gsw is not None else []

    @property
    def ignored_key_count(self) -> int:
        """How many keys outside the schema the reply contained."""
        return sum(self.gsw.ignored_keys.values()) if self.gsw is not None else 0


@dataclass(frozen=True)
class ChunkJob:
    """One chunk to extract, with what the cache needs to file it."""

    chunk: ChunkText
    doc_id: str


class Extractor(Protocol):
    name: str

    def extract_jobs(self, jobs: Sequence[ChunkJob]) -> list[Extraction]: ...


class OfflineGSWExtractor:
    """The spaCy rules as an :class:`Extractor` (deterministic, never fails on text)."""

    #: Extracting writes nothing and costs nothing but CPU, so the pipeline may extract documents
    #: it has not claimed yet (ingestion/extraction/ahead.py).
    side_effect_free = True

    def __init__(self, rules: OfflineExtractor | None = None) -> None:
        self.rules = rules or OfflineExtractor()
        self.name = f"{self.rules.name}-{self.rules.version}"

    def extract_jobs(self, jobs: Sequence[ChunkJob]) -> list[Extraction]:
        return [Extraction(gsw=g) for g in self.rules.extract_many([j.chunk for j in jobs])]


def make_extractor(settings: Settings, namespace: str, chat_model: BaseChatModel | None = None) -> Extractor:
    """The LLM extractor when a chat model is given or configured, else the offline rules."""
    from engramdb.platform.llm import make_chat_model

    model = chat_model if chat_model is not None else make_chat_model(settings)
    if model is None:
        return OfflineGSWExtractor()
    from engramdb.ingestion.extraction.cache import ExtractionCache
    from engramdb.ingestion.extraction.llm import LLMExtractor

    cache = ExtractionCache(settings.cache_dir / "extractions.sqlite")
    return LLMExtractor(model, namespace=namespace, cache=cache, concurrency=settings.llm_concurrency,
                        repair_pass=settings.llm_repair_pass)  # fmt: skip

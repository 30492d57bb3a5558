"""The storage contract: vector collection names, payload fields and passage text, defined once.

Writers (ingestion and memory stages) and readers (ask strategies) both import
these names, so what is written and what is read can never drift apart by
convention. A new stage adds its collection here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

#: One point per QA pair, keyed by the QA id; the vector is the question's.
QA_COLLECTION = "qa"
#: One point per chunk (passage), keyed by the chunk id: dense passage search and chunk similarity.
CHUNK_COLLECTION = "chunks"
#: One point per entity name, keyed by the entity id: embedding candidates for reconciliation.
ENTITY_COLLECTION = "entities"


def passage_text(title: str, text: str) -> str:
    """What a passage is embedded and shown as: its title line, then its text."""
    return f"{title}\n{text}" if title else text


@dataclass(frozen=True)
class QAPayload:
    """The payload of a point in :data:`QA_COLLECTION`."""

    doc_id: str
    chunk_id: str
    verb_phrase_id: str
    question: str
    question_entity_ids: list[str]
    answer_entity_ids: list[str]
    answer_names: list[str]
    answer_types: list[str]
    embedder: str

    def to_payload(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> QAPayload:
        """Read a stored payload, ignoring fields the store adds (namespace, key)."""
        return cls(**{name: payload.get(name) for name in cls.__dataclass_fields__})  # type: ignore[arg-type]


@dataclass(frozen=True)
class ChunkPayload:
    """The payload of a point in :data:`CHUNK_COLLECTION`."""

    doc_id: str
    chunk_id: str
    title: str
    position: int
    embedder: str

    def to_payload(self) -> dict[str, Any]:
        return asdict(self)

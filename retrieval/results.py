"""What ``ask`` returns: the answer, the QA evidence it rests on, chains, citations, timings."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class QACandidate:
    """One QA pair from memory, as retrieved for a hop (before or after scoring)."""

    qa_id: str
    question: str
    answer_ids: tuple[str, ...]
    answer_names: tuple[str, ...]
    answer_types: tuple[str, ...]
    question_entity_ids: tuple[str, ...]
    doc_id: str
    chunk_id: str
    verb_phrase: str = ""
    dense_score: float | None = None
    bm25_score: float | None = None
    via: tuple[str, ...] = ()  # "dense", "bm25", "entity"

    @property
    def text(self) -> str:
        return f"Q: {self.question} A: {', '.join(self.answer_names)}"


@dataclass(frozen=True)
class ScoredQA:
    qa: QACandidate
    score: float


@dataclass(frozen=True)
class ChainStep:
    """One hop of a chain: the instantiated sub-question and the QA pair that answered it."""

    sub_question: str
    qa: QACandidate
    answer_id: str
    answer_name: str
    score: float


@dataclass(frozen=True)
class Chain:
    steps: tuple[ChainStep, ...]
    score: float  # geometric mean of the step scores

    @property
    def answer_name(self) -> str:
        return self.steps[-1].answer_name if self.steps else ""

    @property
    def answer_id(self) -> str:
        return self.steps[-1].answer_id if self.steps else ""


@dataclass(frozen=True)
class Evidence:
    qa_id: str
    question: str
    answers: tuple[str, ...]
    score: float
    doc_id: str
    chunk_id: str

    @property
    def text(self) -> str:
        return f"Q: {self.question} A: {', '.join(self.answers)}"


@dataclass(frozen=True)
class Citation:
    qa_id: str
    chunk_id: str
    doc_id: str
    title: str
    source: str = ""


@dataclass
class HopTrace:
    """What one hop saw, for ``ask --trace``: candidates, kept and pruned beams."""

    sequence: int
    hop: int
    queries: list[str]
    candidates: list[tuple[str, str, float]]  # (instantiated query, "Q: .. A: ..", score)
    kept: list[tuple[str, float]]  # (chain summary, score)
    pruned: list[tuple[str, float]]


@dataclass
class AskResult:
    question: str
    answer: str
    evidence: list[Evidence]
    chains: list[Chain]
    citations: list[Citation]
    decomposition: list[list[str]]
    evidence_tokens: int
    timings: dict[str, float]
    trace: list[HopTrace] = field(default_factory=list)
    answered_by: str = "offline"

    @property
    def is_na(self) -> bool:
        return self.answer == "N/A"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["evidence_text"] = [e.text for e in self.evidence]
        return data

"""What every ask strategy returns: one :class:`AskResult` shape for all of them.

Evidence is generic (a kind, a text, a score and where it came from), so a QA
pair from chain search, a passage from dense search, a gist, a memory point or
a cluster summary travel the same way to the SDK, the CLI, the evaluation and
the LangChain / LlamaIndex retrievers. What only one strategy has (chains and
hop traces, activated entities, memory steps, clusters) lives in ``details``,
a typed object that :mod:`engramdb.retrieval.render` knows how to print.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

NA = "N/A"

#: Evidence kinds engramdb produces; strategies may add their own.
EVIDENCE_KINDS = ("qa_pair", "sentence", "passage", "gist", "fact", "memory_point", "cluster")


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
    via: tuple[str, ...] = ()  # "dense", "bm25", "entity", "reverse"
    verb_phrase_id: str = ""
    #: Relative to the hop that retrieved it (see :mod:`engramdb.retrieval.hop_direction`):
    #: "forward", "reverse", "unanchored", or "" when the hop has no known input entity.
    direction: str = ""

    @property
    def text(self) -> str:
        return f"Q: {self.question} A: {', '.join(self.answer_names)}"


@dataclass(frozen=True)
class ScoredQA:
    qa: QACandidate
    score: float
    #: How the pair reads for the hop ("forward", "reverse", "reverse-reading", "unanchored", "").
    direction: str = ""
    #: The answer-type multiplier already inside ``score`` (the best over the pair's answers).
    type_factor: float = 1.0


@dataclass(frozen=True)
class ChainStep:
    """One hop of a chain: the instantiated sub-question and the QA pair that answered it."""

    sub_question: str
    qa: QACandidate
    answer_id: str
    answer_name: str
    score: float
    #: The 1-based hop of the decomposition this step answers (0: unknown). A hop may take two
    #: steps: its match, then an implicit step that turns the answer into the asked-for kind
    #: ("What country is Warsaw in?" after "Where was Marie Curie born? → Warsaw").
    hop: int = 0
    implicit: bool = False
    answer_type: str = ""
    direction: str = ""  # how the QA pair read for this hop (see ScoredQA.direction)


@dataclass(frozen=True)
class Chain:
    steps: tuple[ChainStep, ...]
    score: float  # geometric mean of the hop scores (a hop's score: the product of its steps')

    @property
    def support(self) -> float:
        """The weakest hop's score: a chain supports its answer only as well as its weakest link
        (the offline N/A decision uses it, so one confident hop cannot hide a failed one)."""
        per_hop: dict[int, float] = {}
        for i, step in enumerate(self.steps, start=1):
            key = step.hop or i
            per_hop[key] = per_hop.get(key, 1.0) * step.score
        return min(per_hop.values(), default=0.0)

    @property
    def answer_name(self) -> str:
        return self.steps[-1].answer_name if self.steps else ""

    @property
    def answer_id(self) -> str:
        return self.steps[-1].answer_id if self.steps else ""


@dataclass(frozen=True)
class Evidence:
    """One piece of memory an answer rests on.

    ``kind`` says what it is (see :data:`EVIDENCE_KINDS`), ``id`` is its stable
    id in memory (QA id, chunk id, gist id, ...), ``doc_id`` and ``chunk_ids``
    are its provenance, and ``metadata`` holds the few kind-specific fields
    (a QA pair's question and answers, a passage's title).
    """

    kind: str
    id: str
    text: str
    score: float
    doc_id: str
    chunk_ids: tuple[str, ...]
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def chunk_id(self) -> str:
        """The first chunk this evidence came from ('' when it has none)."""
        return self.chunk_ids[0] if self.chunk_ids else ""

    # QA-pair view, kept for callers written against the chain-only result.
    @property
    def qa_id(self) -> str:
        return self.id if self.kind == "qa_pair" else ""

    @property
    def question(self) -> str:
        return str(self.metadata.get("question", ""))

    @property
    def answers(self) -> tuple[str, ...]:
        return tuple(self.metadata.get("answers", ()))


def qa_evidence(qa: QACandidate, score: float) -> Evidence:
    """A QA pair as evidence."""
    return Evidence(
        kind="qa_pair", id=qa.qa_id, text=qa.text, score=score, doc_id=qa.doc_id, chunk_ids=(qa.chunk_id,),
        metadata={"question": qa.question, "answers": list(qa.answer_names)},
    )  # fmt: skip


@dataclass(frozen=True)
class Citation:
    """Where a piece of evidence came from: its chunk and document."""

    evidence_id: str
    chunk_id: str
    doc_id: str
    title: str
    source: str = ""

    @property
    def qa_id(self) -> str:
        """The evidence id (named for QA pairs, which were the only evidence once)."""
        return self.evidence_id


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
class Details:
    """Strategy-specific detail; subclasses name their kind for JSON and rendering."""

    kind: ClassVar[str] = "none"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **asdict(self)}


@dataclass
class ChainDetails(Details):
    """Chain search: the surviving chains and, with ``trace``, every hop's beams."""

    kind: ClassVar[str] = "chain"
    chains: list[Chain] = field(default_factory=list)
    trace: list[HopTrace] = field(default_factory=list)
    #: The offline N/A decision: the threshold used and, when calibrated on this memory, the
    #: calibration's summary (see :mod:`engramdb.retrieval.na_calibration`).
    na: dict[str, Any] = field(default_factory=dict)


@dataclass
class PassageDetails(Details):
    """Passage retrieval: the query the passages were ranked for and each passage's score parts."""

    kind: ClassVar[str] = "passages"
    method: str = ""
    scores: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class AskResult:
    """The answer (``N/A`` when memory does not support one; ``None`` for a retrieval-only
    strategy with no reader), the evidence it rests on, citations, tokens and timings."""

    question: str
    answer: str | None
    evidence: list[Evidence]
    citations: list[Citation]
    decomposition: list[list[str]]
    evidence_tokens: int
    timings: dict[str, float]
    strategy: str = "chain"
    answered_by: str = "offline"
    decomposed_by: str = ""
    details: Details = field(default_factory=Details)
    near_misses: list[Evidence] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def is_na(self) -> bool:
        return self.answer == NA

    @property
    def supporting_evidence(self) -> list[Evidence]:
        """The evidence the answer rests on: none after ``N/A`` (what was retrieved then is in
        ``evidence`` for inspection, and its closest items in ``near_misses``)."""
        return [] if self.is_na else self.evidence

    @property
    def chains(self) -> list[Chain]:
        """Chain search's chains ([] for other strategies)."""
        return self.details.chains if isinstance(self.details, ChainDetails) else []

    @property
    def trace(self) -> list[HopTrace]:
        """Chain search's hop trace ([] for other strategies or without ``trace``)."""
        return self.details.trace if isinstance(self.details, ChainDetails) else []

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["details"] = self.details.to_dict()
        data["evidence_text"] = [e.text for e in self.evidence]
        # Fields of the chain-only result, kept so existing consumers of the JSON keep working.
        data["chains"] = data["details"].get("chains", [])
        data["trace"] = data["details"].get("trace", [])
        return data

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

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Evidence:
        """The inverse of ``asdict`` (as JSON carries it): how a remote client rebuilds evidence."""
        return cls(kind=data["kind"], id=data["id"], text=data["text"], score=data["score"],
                   doc_id=data["doc_id"], chunk_ids=tuple(data.get("chunk_ids") or ()),
                   metadata=dict(data.get("metadata") or {}))  # fmt: skip


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

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Citation:
        """The inverse of ``asdict``: how a remote client rebuilds a citation."""
        return cls(evidence_id=data["evidence_id"], chunk_id=data["chunk_id"], doc_id=data["doc_id"],
                   title=data["title"], source=data.get("source", ""))  # fmt: skip


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

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Details:
        """The inverse of ``to_dict``: chain and passage details are rebuilt as their types (so
        ``AskResult.chains`` works on a remote result); any other kind (a method folder's, which this
        core module may not import) comes back as :class:`RawDetails` holding the dict as sent."""
        kind = data.get("kind", "none")
        if kind == ChainDetails.kind:
            return ChainDetails(chains=[_chain_from_dict(c) for c in data.get("chains", [])],
                                trace=[_trace_from_dict(t) for t in data.get("trace", [])],
                                na=dict(data.get("na") or {}))  # fmt: skip
        if kind == PassageDetails.kind:
            return PassageDetails(method=data.get("method", ""), scores=list(data.get("scores", [])))
        if kind == Details.kind and set(data) == {"kind"}:
            return Details()
        return RawDetails(data=dict(data))


@dataclass
class RawDetails(Details):
    """Details of a kind rebuilt from JSON without its type: ``to_dict`` gives back what was sent.

    Its own ``kind`` is ``raw`` so no renderer takes it for the typed details it came from."""

    kind: ClassVar[str] = "raw"
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.data)


def _qa_from_dict(data: dict[str, Any]) -> QACandidate:
    tuples = ("answer_ids", "answer_names", "answer_types", "question_entity_ids", "via")
    return QACandidate(**{k: tuple(v) if k in tuples else v for k, v in data.items()})


def _chain_from_dict(data: dict[str, Any]) -> Chain:
    steps = tuple(ChainStep(**{**step, "qa": _qa_from_dict(step["qa"])}) for step in data["steps"])
    return Chain(steps=steps, score=data["score"])


def _trace_from_dict(data: dict[str, Any]) -> HopTrace:
    return HopTrace(sequence=data["sequence"], hop=data["hop"], queries=list(data["queries"]),
                    candidates=[tuple(c) for c in data["candidates"]],  # type: ignore[misc]
                    kept=[tuple(k) for k in data["kept"]], pruned=[tuple(p) for p in data["pruned"]])  # type: ignore[misc]  # fmt: skip


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

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AskResult:
        """The inverse of :meth:`to_dict` (also after a JSON round trip): what ``engramdb.connect``
        rebuilds from the server's answer. The derived keys (``evidence_text``, ``chains``, ``trace``)
        are recomputed from the rest, so they are not read."""
        return cls(
            question=data["question"], answer=data["answer"],
            evidence=[Evidence.from_dict(e) for e in data["evidence"]],
            citations=[Citation.from_dict(c) for c in data["citations"]],
            decomposition=[list(seq) for seq in data["decomposition"]], evidence_tokens=data["evidence_tokens"],
            timings=dict(data["timings"]), strategy=data.get("strategy", "chain"),
            answered_by=data.get("answered_by", "offline"), decomposed_by=data.get("decomposed_by", ""),
            details=Details.from_dict(data.get("details") or {"kind": Details.kind}),
            near_misses=[Evidence.from_dict(e) for e in data.get("near_misses", [])],
            notes=list(data.get("notes", [])),
        )  # fmt: skip

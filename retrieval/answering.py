"""Answers grounded only in the QA evidence, or ``N/A``.

With an LLM, the model sees the deduplicated QA pairs of the surviving chains
(never raw chunks) and must answer from them alone or reply ``N/A``. Offline,
the answer is the final entity of the best chain, and ``N/A`` when that
chain's score is below a calibrated threshold (memory does not support an
answer well enough).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from engramdb.platform.llm import message_text, token_usage
from engramdb.retrieval.results import Chain, Evidence

NA = "N/A"
# Calibrated by benchmarks/calibrate_na.py on the MuSiQue memory: the 50 questions
# with gold decompositions against the same chains started from invented names.
# At 0.50, 92% of answerable questions are answered and 70% of absent ones refused
# (best balanced accuracy, 81%, shared with 0.55, which refuses more real questions).
DEFAULT_NA_THRESHOLD = 0.50

ANSWER_PROMPT = """Answer the question using ONLY the evidence given (question-answer pairs or passages).
Reply with the answer alone: a name, date, number or short phrase, with no explanation.
If the evidence does not contain the answer, reply exactly N/A."""


@dataclass(frozen=True)
class Answer:
    text: str
    input_tokens: int = 0
    output_tokens: int = 0


class OfflineAnswerer:
    """The best chain's final answer entity, or N/A below the threshold."""

    name = "offline"

    def __init__(self, na_threshold: float = DEFAULT_NA_THRESHOLD) -> None:
        self.na_threshold = na_threshold

    def answer(self, question: str, chains: Sequence[Chain], evidence: Sequence[Evidence]) -> Answer:
        best = max(chains, key=lambda c: c.score, default=None)
        if best is None or best.score < self.na_threshold:
            return Answer(NA)
        return Answer(best.answer_name)


class LLMAnswerer:
    """A chat model reads the QA evidence and answers or says N/A."""

    name = "llm"

    def __init__(self, model: BaseChatModel) -> None:
        self.model = model

    def answer(self, question: str, chains: Sequence[Chain], evidence: Sequence[Evidence]) -> Answer:
        return self.answer_texts(question, [e.text for e in evidence])

    def answer_texts(self, question: str, texts: Sequence[str]) -> Answer:
        """Answer from any evidence texts (QA pairs, or passages for the baselines)."""
        if not texts:
            return Answer(NA)
        lines = "\n".join(f"{i}. {t}" for i, t in enumerate(texts, start=1))
        messages = [SystemMessage(ANSWER_PROMPT), HumanMessage(f"Evidence:\n{lines}\n\nQuestion: {question}")]
        reply = self.model.invoke(messages)
        tokens = token_usage(reply, sum(len(message_text(m)) for m in messages))  # type: ignore[arg-type]
        return Answer(parse_answer(message_text(reply)), *tokens)  # type: ignore[arg-type]


_PREFIX = re.compile(r"^(final answer|answer)\s*[:\-]\s*", re.IGNORECASE)
_NA = re.compile(
    r"^\W*(n/?a|none|unknown|i (do not|don't) know|not (available|answerable|enough information|in (the )?evidence)"
    r"|(the )?evidence does not (say|contain|mention).*|cannot be determined)\W*$",
    re.IGNORECASE,
)


def parse_answer(text: str) -> str:
    """Normalise a model's answer: strip labels and quotes; every way of declining becomes N/A."""
    line = next((ln.strip() for ln in text.strip().splitlines() if ln.strip()), "")
    line = _PREFIX.sub("", line).strip()
    if not re.search(r"\b[A-Z]\.$", line):  # keep the period of an initial ("George W.")
        line = line.rstrip(".")
    line = line.strip().strip('"“”\'').strip()
    if not line or _NA.match(line):
        return NA
    return line

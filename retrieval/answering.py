"""Answers grounded only in the QA evidence, or ``N/A``.

With an LLM, the model sees the deduplicated QA pairs of the surviving chains
(each followed by the one sentence it was drawn from, never whole chunks; see
:mod:`engramdb.retrieval.grounding`) that score at least the evidence floor — the same
threshold below which the offline answerer says ``N/A`` — and must answer from
them alone. It is asked for ``{"answer": ..., "supported": true|false}``; the
reply is read tolerantly (prose or a fence around the JSON, or plain text with
markdown, "The answer is ...", a trailing period), and every way of declining
("Not stated in the evidence.", "N/A - ...") becomes ``N/A``. Offline, the
answer is the final entity of the best chain, and ``N/A`` when that chain's
score is below the memory's calibrated threshold (memory does not support an
answer well enough; see :mod:`engramdb.retrieval.na_calibration`).

Every :class:`Answer` says where it came from (:attr:`Answer.source`):
``llm``, ``offline``, ``offline-fallback: <reason>`` when the model could not
be reached and the offline answerer stood in, or ``llm-not-asked: <reason>``
when no evidence cleared the floor.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from engramdb.ingestion.reconcile import normalize_name
from engramdb.platform.errors import LLMError
from engramdb.platform.llm import (
    ASK_RETRY,
    RetryPolicy,
    invoke_with_retry,
    message_text,
    parse_json_reply,
    token_usage,
)
from engramdb.retrieval.answer_types import country_of
from engramdb.retrieval.decomposition import Comparison
from engramdb.retrieval.results import Chain, Evidence

NA = "N/A"
# The default of an answerer built on its own. Chain search does not use it: each memory
# calibrates its own threshold from probes it provides (retrieval/na_calibration.py).
DEFAULT_NA_THRESHOLD = 0.50
FALLBACK_PREFIX = "offline-fallback: "
NOT_ASKED_PREFIX = "llm-not-asked: "

ANSWER_PROMPT = """Answer the question from the numbered evidence alone (question-answer pairs, each with the sentence it came from, or passages).
Reply with one JSON object and nothing else:
  {"answer": "<a name, date, number or short phrase>", "supported": true}
when the evidence gives the answer, and
  {"answer": null, "supported": false}
when it does not. No explanation, no markdown."""


@dataclass(frozen=True)
class Answer:
    """An answer (or ``N/A``), what it cost, and who gave it.

    ``source`` is ``llm``, ``offline``, ``offline-fallback: <reason>`` or
    ``llm-not-asked: <reason>``; ``supported`` is the model's own flag when it
    gave one; ``evidence_count`` is how many evidence items the reader saw.
    """

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    source: str = "offline"
    supported: bool | None = None
    evidence_count: int = 0


class OfflineAnswerer:
    """The best chain's final answer entity, or N/A when its weakest hop scores below the threshold."""

    name = "offline"

    def __init__(self, na_threshold: float = DEFAULT_NA_THRESHOLD) -> None:
        self.na_threshold = na_threshold

    def answer(self, question: str, chains: Sequence[Chain], evidence: Sequence[Evidence]) -> Answer:
        best = max(chains, key=lambda c: c.score, default=None)
        if best is None or best.support < self.na_threshold:
            return Answer(NA, source="offline", supported=False)
        return Answer(asked_form(question, best.answer_name), source="offline", supported=True)

    def answer_comparison(self, comparison: Comparison, per_sequence: Sequence[Sequence[Chain]]) -> Answer:
        """A comparison's answer (an option, or yes / no), N/A below the threshold or undecidable."""
        decided = compare(comparison, per_sequence)
        if decided is None or decided[1] < self.na_threshold:
            return Answer(NA, source="offline", supported=False)
        return Answer(decided[0], source="offline", supported=True)


_ASKS_YEAR = re.compile(r"\b(?:what|which)\s+year\b", re.IGNORECASE)
_YEAR = re.compile(r"\b\d{3,4}(?:\s*(?:BC|BCE|AD|CE)\b)?", re.IGNORECASE)


def asked_form(question: str, answer: str) -> str:
    """The answer in the form the question asks for: "In what year ...?" answered by the date
    "December 11, 1998" is answered "1998" (the full date stays in the evidence)."""
    if _ASKS_YEAR.search(question):
        years = _YEAR.findall(answer)
        if len(years) == 1 and years[0] != answer.strip():
            return years[0]
    return answer


_MONTH_NAMES = "january february march april may june july august september october november december".split()
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}


def date_key(text: str) -> tuple[int, int, int] | None:
    """A sortable (year, month, day) read from an answer ("24 March 1867", "1990", "c. 300 BC")."""
    low = text.lower()
    year_match = re.search(r"\b(\d{3,4})s?\b", low) or re.search(r"\b(\d{1,2})\s*(?:bc|bce|ad|ce)\b", low)
    if year_match is None:
        return None
    year = int(year_match.group(1))
    if re.search(r"\b(bc|bce)\b", low):
        year = -year
    month = next((i for i, m in enumerate(_MONTH_NAMES, start=1) if re.search(rf"\b{m[:3]}", low)), 0)
    rest = low[: year_match.start()] + " " + low[year_match.end() :]
    day_match = re.search(r"\b(\d{1,2})(?:st|nd|rd|th)?\b", rest)
    day = int(day_match.group(1)) if day_match and month else 0
    return year, month, day


def number_value(text: str) -> float | None:
    """The amount an answer states ("1,200", "3.5 million"), or None."""
    match = re.search(r"(\d[\d,]*(?:\.\d+)?)\s*(thousand|million|billion|trillion)?", text.lower())
    if match is None:
        return None
    return float(match.group(1).replace(",", "")) * _SCALE.get(match.group(2) or "", 1.0)


def _same_value(a: str, b: str) -> bool:
    """Two answers name the same thing: equal names, one inside the other, or the same country."""
    na, nb = normalize_name(a), normalize_name(b)
    if not na or not nb:
        return False
    if na == nb or re.search(rf"\b{re.escape(na)}\b", nb) or re.search(rf"\b{re.escape(nb)}\b", na):
        return True
    ca, cb = country_of(a), country_of(b)
    return ca is not None and ca == cb


def compare(comparison: Comparison, per_sequence: Sequence[Sequence[Chain]]) -> tuple[str, float] | None:
    """The answer of a comparison from each sequence's chains (best first), and the weakest support
    among the chains used (the answer is only as supported as its least supported part).

    A date or amount comparison uses, per sequence, the best chain whose answer is a date (an
    amount): "When was X born?" may rank "When did X become a director? → late 1930s" first, yet
    only a date can be compared. None when a sequence found nothing usable or there is a tie.
    """
    if not per_sequence or any(not chains for chains in per_sequence):
        return None
    if comparison.kind in ("same", "both"):
        chosen = [max(chains, key=lambda c: c.score) for chains in per_sequence]
        answers = [c.answer_name for c in chosen]
        if comparison.kind == "same":
            yes = all(_same_value(answers[0], a) for a in answers[1:])
        else:
            yes = all(_same_value(comparison.value, a) for a in answers)
        return ("yes" if yes else "no"), min(c.support for c in chosen)
    if len(comparison.options) != len(per_sequence):
        return None
    read = date_key if comparison.kind in ("earliest", "latest") else number_value
    keys: list[Any] = []
    supports: list[float] = []
    for chains in per_sequence:
        usable = [(read(c.answer_name), c) for c in sorted(chains, key=lambda c: -c.score)]
        usable = [(k, c) for k, c in usable if k is not None]
        if not usable:
            return None
        keys.append(usable[0][0])
        supports.append(usable[0][1].support)
    pick = min(keys) if comparison.kind in ("earliest", "smallest") else max(keys)
    if keys.count(pick) > 1:
        return None
    return comparison.options[keys.index(pick)], min(supports)


class LLMAnswerer:
    """A chat model reads the evidence and answers or says N/A.

    The floor decides only *whether* the model is asked: when no evidence item scores at
    least ``evidence_floor`` the answer is N/A without a call. When it is asked, the model
    reads every item, in the order given: a chain's weaker hop is as much a part of the
    chain as its strongest, and hiding it leaves the reader a chain it cannot follow.

    Transient provider errors are retried; if the model still cannot be
    reached, ``fallback`` (an :class:`OfflineAnswerer`) answers and the
    answer's source says so, or without one an :class:`LLMError` is raised.
    """

    name = "llm"

    def __init__(
        self,
        model: BaseChatModel,
        *,
        evidence_floor: float = DEFAULT_NA_THRESHOLD,
        fallback: OfflineAnswerer | None = None,
        retry_policy: RetryPolicy = ASK_RETRY,
    ) -> None:
        self.model = model
        self.evidence_floor = evidence_floor
        self.fallback = fallback
        self.retry_policy = retry_policy

    def answer(self, question: str, chains: Sequence[Chain], evidence: Sequence[Evidence]) -> Answer:
        if not any(e.score >= self.evidence_floor for e in evidence):
            reason = f"no evidence scored {self.evidence_floor:.2f} or more ({len(evidence)} below)"
            return Answer(NA, source=NOT_ASKED_PREFIX + reason, supported=False)
        try:
            return self._ask(question, [e.text for e in evidence])
        except LLMError as exc:
            if self.fallback is None:
                raise
            stand_in = self.fallback.answer(question, chains, evidence)
            return replace(stand_in, source=FALLBACK_PREFIX + " ".join(str(exc).split())[:300])

    def answer_texts(self, question: str, texts: Sequence[str]) -> Answer:
        """Answer from any evidence texts (QA pairs, or passages for the baselines); no floor applies."""
        if not texts:
            return Answer(NA, source=NOT_ASKED_PREFIX + "no evidence", supported=False)
        return self._ask(question, texts)

    def _ask(self, question: str, texts: Sequence[str]) -> Answer:
        lines = "\n".join(f"{i}. {t}" for i, t in enumerate(texts, start=1))
        messages = [SystemMessage(ANSWER_PROMPT), HumanMessage(f"Evidence:\n{lines}\n\nQuestion: {question}")]
        reply = invoke_with_retry(self.model, messages, self.retry_policy, "answer call")
        tokens = token_usage(reply, sum(len(message_text(m)) for m in messages))
        text, supported = read_answer(message_text(reply))
        return Answer(text, *tokens, source="llm", supported=supported, evidence_count=len(texts))


# --------------------------------------------------------------------------- reading the reply

_LABEL = re.compile(
    r"^(?:(?:final\s+)?answer\s*(?:is\s*)?[:\-–]\s*|the\s+(?:final\s+|correct\s+)?answer\s+(?:is|would be)\s*:?\s*)",
    re.IGNORECASE,
)
_EMPHASIS = re.compile(r"(?<!\w)(\*\*|__|\*|_|`)(\S(?:.*?\S)?)\1(?!\w)")
_BULLET = re.compile(r"^(?:[-*•]\s+|\d+[.)]\s+)")
_DECLINE = re.compile(
    r"^\W*(?:n/?a\b|none\b|unknown\b|no\s+(?:answer|information|evidence|mention|data)\b"
    r"|not\s+(?:stated|mentioned|given|provided|specified|available|answerable|known|found|clear|enough|"
    r"in\s+(?:the\s+)?evidence|supported|determinable)\b"
    r"|(?:i\s+)?(?:cannot|can't|can\s+not|could\s+not|couldn't|am\s+unable\s+to|unable\s+to)\s+"
    r"(?:answer|determine|tell|find|say|be\s+determined)\b"
    r"|i\s+(?:do\s+not|don't)\s+know\b|insufficient\b|there\s+is\s+no\b"
    r"|(?:the\s+)?evidence\s+(?:does\s+not|doesn't|did\s+not)\b|cannot\s+be\s+determined\b"
    r"|it\s+is\s+not\s+(?:stated|mentioned|given|known|possible)\b)",
    re.IGNORECASE,
)


def _flag(value: Any) -> bool | None:
    """A "supported" flag as a bool (models write true, "true", "yes", 1 ...); None when absent."""
    if value is None or isinstance(value, bool):
        return value
    return str(value).strip().lower() not in {"false", "no", "0", "", "none", "null"}


def read_answer(text: str) -> tuple[str, bool | None]:
    """(answer, supported) from a model reply: the JSON object when there is one, else the plain text."""
    data = _json_answer(text)
    if isinstance(data, dict):
        flag = _flag(data.get("supported"))
        value = data.get("answer")
        if flag is False or value is None:
            return NA, False
        if isinstance(value, list):
            value = ", ".join(str(v) for v in value if v is not None)
        answer = clean_answer(str(value))
        return answer, (False if answer == NA else flag)
    answer = clean_answer(text)
    return answer, None if answer != NA else False


def parse_answer(text: str) -> str:
    """Normalise a model's answer: strip labels, markdown and quotes; every way of declining becomes N/A."""
    return read_answer(text)[0]


def _json_answer(text: str) -> Any:
    if "{" not in (text or ""):
        return None
    try:
        return parse_json_reply(text)
    except ValueError:
        return None


def clean_answer(text: str) -> str:
    """The answer in a line of plain text: first non-empty line, without decoration or a refusal."""
    line = next((ln.strip() for ln in (text or "").strip().splitlines() if ln.strip()), "")
    line = _BULLET.sub("", line)
    line = _EMPHASIS.sub(r"\2", line).strip()
    line = _LABEL.sub("", line).strip()
    line = _EMPHASIS.sub(r"\2", line).strip()
    if not re.search(r"\b[A-Z]\.$", line):  # keep the period of an initial ("George W.")
        line = line.rstrip(".")
    line = line.strip().strip("\"“”'*").strip()
    if not line or _DECLINE.match(line):
        return NA
    return line

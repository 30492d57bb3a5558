"""Rerankers score a hop's candidate QA pairs against the instantiated sub-question.

Panini's ablation shows reranking is where multi-hop quality lives. With a
Voyage key, ``rerank-2.5`` (a cross-encoder) does it. Offline, no
cross-encoder can be installed, so :class:`OfflineReranker` combines signals
that each fix a failure seen on real data:

* dense similarity of the sub-question and the QA question (stored vectors);
* relation overlap: the sub-question's words *other than its entity names*
  against the QA question's words, so "What company published X?" prefers
  "Who published X?" over "When was X established?"; the noun a "which"
  question asks for counts as present when an answer's name carries it
  ("Which krai ...?" and "... → Khabarovsk Krai");
* lexical overlap of all content words (anchors the right entity by name);
* answer-type agreement with the wh-word and the noun it asks about (who →
  person/org, when → date, what country → a country; see
  :mod:`engramdb.retrieval.answer_types`), the best over the pair's answers;
* direction (:mod:`engramdb.retrieval.hop_direction`): a pair that answers
  with the hop's subject, or reads the fact the other way round, is a reverse
  match and keeps only a fraction of its score; a pair about none of the
  hop's subjects keeps a larger one;
* the hop's input entity is never accepted as its own answer.

The Voyage reranker applies the same direction rule to the cross-encoder's
scores (a cross-encoder cannot tell "the capital of Warsaw" from "Warsaw, the
capital of" by entity roles). Scores are in [0, 1], so chain scores (geometric
means) stay comparable and the N/A threshold can be calibrated per memory.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from engramdb.platform.config import Settings
from engramdb.retrieval.answer_types import ExpectedType, asked_noun, expected_type, fit
from engramdb.retrieval.hop_direction import direction_factors
from engramdb.retrieval.results import QACandidate, ScoredQA

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an the of in on at to for by with from and or is are was were be been being do does did that this these "
    "those it its as into than then there their they he she his her him has have had which".split()
)
_WH = frozenset("what who whom whose which when where why how".split())


class Reranker(Protocol):
    name: str

    def score(
        self, query: str, candidates: Sequence[QACandidate], input_names: Sequence[str] = ()
    ) -> list[ScoredQA]: ...


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> set[str]:
    """The stemmed words of ``text`` that carry meaning (a new set the caller may change)."""
    return set(_content_words(text))


@lru_cache(maxsize=32_768)
def _content_words(text: str) -> frozenset[str]:
    """Cached: one ask compares the same passages, sentences and questions many times over (the
    packer, the reranker, the N/A probes); stemming them again was a fifth of a BM25 ask's time."""
    return frozenset(_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP and w not in _WH)


@dataclass(frozen=True)
class OfflineWeights:
    dense: float = 0.45
    relation: float = 0.30
    lexical: float = 0.25
    dense_floor: float = 0.15  # cosine at or below this counts as 0


class OfflineReranker:
    """Dense + relation + lexical + answer-type scoring; no model beyond the embedder."""

    name = "offline"

    def __init__(self, weights: OfflineWeights | None = None) -> None:
        self.w = weights or OfflineWeights()

    def score(
        self, query: str, candidates: Sequence[QACandidate], input_names: Sequence[str] = ()
    ) -> list[ScoredQA]:
        q_words = content_words(query)
        entity_words = set().union(*(content_words(n) for n in input_names)) if input_names else set()
        relation_q = q_words - entity_words
        wanted = expected_type(query)
        kind_word = _kind_word(query)
        kept = _not_own_input(candidates, input_names)
        directions = direction_factors(query, candidates, input_names)  # every candidate: twins included
        out: list[ScoredQA] = []
        for cand in kept:
            c_words = content_words(cand.question)
            if kind_word and kind_word in content_words(" ".join(cand.answer_names)):
                c_words.add(kind_word)  # "Which krai ...?" → "What place is in Russia? → Khabarovsk Krai"
            dense = max(0.0, ((cand.dense_score or 0.0) - self.w.dense_floor) / (1 - self.w.dense_floor))
            lexical = len(q_words & c_words) / len(q_words) if q_words else 0.0
            if relation_q:
                relation = len(relation_q & (c_words - entity_words)) / len(relation_q)
            else:
                relation = lexical
            s = self.w.dense * min(dense, 1.0) + self.w.relation * relation + self.w.lexical * lexical
            type_factor = pair_type_factor(wanted, cand)
            direction, direction_factor = directions[cand.qa_id]
            s *= type_factor * direction_factor
            out.append(ScoredQA(cand, round(min(max(s, 0.0), 1.0), 6), direction, type_factor))
        out.sort(key=lambda x: (-x.score, x.qa.qa_id))
        return out


def _kind_word(query: str) -> str | None:
    """The asked-for noun as the overlaps compare words (stemmed), or None."""
    noun = asked_noun(query)
    if noun is None or noun in _STOP or " " in noun:
        return None
    return _stem(noun)


def pair_type_factor(wanted: ExpectedType | None, cand: QACandidate) -> float:
    """The answer-type multiplier of a QA pair: the best fit among its answers (1 when nothing is expected)."""
    if wanted is None or not cand.answer_names:
        return 1.0
    types = cand.answer_types or ("",) * len(cand.answer_names)
    return max(fit(wanted, name, t or "") for name, t in zip(cand.answer_names, types, strict=False))


def _not_own_input(candidates: Sequence[QACandidate], input_names: Sequence[str]) -> list[QACandidate]:
    """Candidates that answer with something other than the hop's own input entities."""
    blocked = {n.strip().lower() for n in input_names}
    if not blocked:
        return list(candidates)
    return [c for c in candidates if not all(a.strip().lower() in blocked for a in c.answer_names)]


class VoyageReranker:
    """Voyage AI ``rerank-2.5`` cross-encoder over "Q: ... A: ..." texts."""

    name = "voyage"

    def __init__(self, api_key: str, model: str = "rerank-2.5", client: object | None = None) -> None:
        if client is None:
            import voyageai

            client = voyageai.Client(api_key=api_key)
        self.client = client
        self.model = model

    def score(
        self, query: str, candidates: Sequence[QACandidate], input_names: Sequence[str] = ()
    ) -> list[ScoredQA]:
        kept = _not_own_input(candidates, input_names)
        if not kept:
            return []
        reply = self.client.rerank(query=query, documents=[c.text for c in kept], model=self.model)  # type: ignore[attr-defined]
        directions = direction_factors(query, candidates, input_names)
        out = []
        for r in reply.results:
            cand = kept[r.index]
            direction, factor = directions[cand.qa_id]
            out.append(ScoredQA(cand, float(r.relevance_score) * factor, direction))
        out.sort(key=lambda x: (-x.score, x.qa.qa_id))
        return out


def make_reranker(settings: Settings) -> Reranker:
    """Voyage ``rerank-2.5`` when a Voyage key is configured, else the offline reranker."""
    key = settings.voyage_api_key
    if key is not None and key.get_secret_value():
        return VoyageReranker(key.get_secret_value())
    return OfflineReranker()

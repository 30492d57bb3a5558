"""Answer and retrieval metrics with the standard SQuAD / HippoRAG answer normalisation.

An answer is normalised by lower-casing, removing punctuation and the articles
a/an/the, and collapsing white space. EM and F1 take the best value over the
gold answer and its aliases.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)


def normalize_answer(text: str) -> str:
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, golds: Iterable[str]) -> float:
    pred = normalize_answer(prediction)
    return float(any(pred == normalize_answer(g) for g in golds))


def _f1(prediction: str, gold: str) -> float:
    pred_tokens = normalize_answer(prediction).split()
    gold_tokens = normalize_answer(gold).split()
    if not pred_tokens or not gold_tokens:
        return float(pred_tokens == gold_tokens)
    common = Counter(pred_tokens) & Counter(gold_tokens)
    overlap = sum(common.values())
    if overlap == 0:
        return 0.0
    precision = overlap / len(pred_tokens)
    recall = overlap / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def f1_score(prediction: str, golds: Iterable[str]) -> float:
    return max((_f1(prediction, g) for g in golds), default=0.0)


def answer_in_text(golds: Iterable[str], texts: Iterable[str]) -> bool:
    """Does any normalised gold answer appear (as whole words) in any of the texts?"""
    haystack = " " + " ".join(normalize_answer(t) for t in texts) + " "
    return any(f" {g} " in haystack for g in (normalize_answer(x) for x in golds) if g)


def recall_at_k(retrieved: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Share of the gold items found among the first k retrieved (ordered, deduplicated)."""
    gold_set = set(gold)
    if not gold_set:
        return float("nan")
    top = list(dict.fromkeys(retrieved))[:k]
    return len(gold_set & set(top)) / len(gold_set)


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of the values; NaN when there are none."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]

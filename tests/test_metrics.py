"""Metric functions on known cases."""

from __future__ import annotations

import math

import pytest

from engramdb.retrieval.metrics import answer_in_text, exact_match, f1_score, normalize_answer, recall_at_k


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [("The Finnish markka", "finnish markka"), ("  U.S. ", "us"), ("A Tale of Two Cities!", "tale of two cities"),
     ("Boeing B - 29", "boeing b 29"), ("an apple, the pear", "apple pear"), ("", "")],
)  # fmt: skip
def test_normalize_answer(raw: str, normalized: str) -> None:
    assert normalize_answer(raw) == normalized


def test_exact_match_uses_aliases_and_normalization() -> None:
    assert exact_match("the Anglican Communion", ["Anglican Communion"]) == 1.0
    assert exact_match("Finland", ["Finnish markka", "markka"]) == 0.0
    assert exact_match("U.S.", ["United States", "US"]) == 1.0


def test_f1_known_values() -> None:
    assert f1_score("Victoria Falls", ["Victoria Falls"]) == 1.0
    # pred tokens {victoria}, gold {victoria, falls}: P=1, R=0.5 -> F1=2/3
    assert f1_score("Victoria", ["Victoria Falls"]) == pytest.approx(2 / 3)
    assert f1_score("Niagara Falls", ["Victoria Falls"]) == pytest.approx(0.5)
    assert f1_score("Paris", ["Victoria Falls", "Paris"]) == 1.0
    assert f1_score("", ["x"]) == 0.0
    assert f1_score("the", ["a"]) == 1.0  # both normalise to nothing


def test_answer_in_text_matches_whole_words() -> None:
    assert answer_in_text(["G. Stanley Hall"], ["Q: Who was the first president? A: G. Stanley Hall"])
    assert not answer_in_text(["Hall"], ["Halloween parade"])
    assert answer_in_text(["35", "thirty-five"], ["There are 35 stores."])


def test_recall_at_k() -> None:
    assert recall_at_k(["a", "b", "c"], ["a", "c"], 2) == 0.5
    assert recall_at_k(["a", "a", "c"], ["a", "c"], 2) == 1.0  # duplicates do not use up k
    assert recall_at_k(["x"], ["a"], 5) == 0.0
    assert math.isnan(recall_at_k(["x"], [], 5))

"""Terminal rendering: an N/A answer never shows what was retrieved as supporting evidence."""

from __future__ import annotations

from rich.console import Console

from engramdb.retrieval.render import render_result
from engramdb.retrieval.results import AskResult, Evidence


def _result(answer: str | None) -> AskResult:
    unrelated = Evidence("qa_pair", "d#0/q1", "Q: Who owned Europe? A: Coca-Cola Company", 0.16, "d", ("d#0",),
                         {"question": "Who owned Europe?", "answers": ["Coca-Cola Company"]})  # fmt: skip
    return AskResult(question="Who [bold]owns[/] the Moon?", answer=answer, evidence=[unrelated], citations=[],
                     decomposition=[["Who owns the Moon?"]], evidence_tokens=12, timings={"total": 0.01})  # fmt: skip


def _render(result: AskResult) -> str:
    console = Console(record=True, width=200)
    render_result(console, result)
    return console.export_text()


def test_na_shows_near_misses_not_evidence() -> None:
    text = _render(_result("N/A"))
    assert "no evidence in memory supports an answer" in text
    assert "Near misses" in text and "Coca-Cola Company" in text
    assert "Evidence (" not in text


def test_answer_shows_its_evidence_and_user_text_is_not_markup() -> None:
    text = _render(_result("Nobody"))
    assert "Evidence (12 tokens)" in text and "Near misses" not in text
    assert "Who [bold]owns[/] the Moon?" in text


def test_retrieval_only_strategy_says_it_has_no_reader() -> None:
    assert "retrieves only" in _render(_result(None))


def test_na_lists_each_near_miss_once_with_the_reason() -> None:
    result = _result("N/A")
    result.near_misses = list(result.evidence)  # chain search puts its closest items here too
    result.notes = ["no evidence in memory supports an answer: the best chain's weakest hop scored 0.16"]
    text = _render(result)
    assert text.count("Coca-Cola Company") == 1
    assert "note: no evidence in memory supports an answer" in text
    assert (
        result.supporting_evidence == []
        and _result("Nobody").supporting_evidence == _result("Nobody").evidence
    )


def test_the_chain_trace_says_how_the_na_bar_was_set() -> None:
    from engramdb.retrieval.results import ChainDetails

    result = _result("Nobody")
    result.details = ChainDetails(na={"threshold": 0.21, "calibration": {
        "rule": "refuses 80% of absent probes", "refusal_rate": 0.8, "absent_probes": 30,
        "answer_rate": 1.0, "answerable_probes": 30}})  # fmt: skip
    console = Console(record=True, width=300)
    render_result(console, result, trace=True)
    text = console.export_text()
    assert "N/A below a weakest-hop score of 0.210" in text and "refuses 80% of 30 absent probes" in text

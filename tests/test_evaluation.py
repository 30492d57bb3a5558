"""The evaluation harness with an LLM configured (fake chat model at the network boundary)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from engramdb.platform.errors import InputError
from engramdb.retrieval.eval_data import load_dataset
from engramdb.retrieval.eval_report import markdown_table
from engramdb.retrieval.evaluation import EvalRunner, run_eval, summarize

DOCS = [
    {"id": "curie", "title": "Marie Curie", "text": "Marie Curie was born in Warsaw in 1867. She won the Nobel Prize in Physics in 1903."},
    {"id": "warsaw", "title": "Warsaw", "text": "Warsaw is the capital of Poland. Warsaw lies on the Vistula River."},
]  # fmt: skip


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "qa.json"
    path.write_text(json.dumps([
        {"question": "Where was Marie Curie born?", "answer": "Warsaw", "answer_aliases": ["Warszawa"]},
        {"question": "When did Marie Curie walk on the Moon?", "answer": "", "answerable": False},
    ]))  # fmt: skip
    return path


def test_llm_decomposition_and_answers_are_measured(memory, dataset: Path) -> None:
    memory.ingest(DOCS)
    items = load_dataset(dataset)
    assert [i.answerable for i in items] == [True, False] and items[0].answers == ("Warsaw", "Warszawa")
    replies = [
        # item 1: chain decomposes then answers; bm25 and dense answer from passages
        '{"sequences": [["Where was Marie Curie born?"]]}', "Warsaw", "Warszawa", "Paris",
        # item 2 (unanswerable): chain refuses, bm25 refuses, dense guesses
        '{"sequences": [["When did Marie Curie walk on the Moon?"]]}', "N/A", "N/A", "1903",
    ]  # fmt: skip
    model = FakeListChatModel(responses=replies)
    runners = [EvalRunner(memory.strategy(n, chat_model=model, decomposition="llm"), "llm") for n in ("chain", "bm25", "dense")]
    records = run_eval(runners, items)
    summary = {row["strategy"]: row for row in summarize(records)}
    assert summary["chain"]["em"] == 1.0 and summary["bm25"]["em"] == 1.0 and summary["dense"]["em"] == 0.0
    assert summary["chain"]["refusal_accuracy"] == 1.0 and summary["dense"]["refusal_accuracy"] == 0.0
    chain_records = [r for r in records if r.strategy == "chain"]
    assert chain_records[0].answer_in_evidence and chain_records[0].evidence_tokens > 0
    assert summary["dense"]["recall@5"] is None  # plain datasets have no gold passages
    table = markdown_table(list(summary.values()))
    assert "refusal acc" in table and "| chain |" in table


def test_offline_baselines_have_no_answer_but_retrieval_metrics(memory, dataset: Path) -> None:
    memory.ingest(DOCS)
    items = load_dataset(dataset)
    records = run_eval([EvalRunner(memory.strategy("bm25", decomposition="offline"), "offline")], items)
    assert all(r.answer is None and r.em is None for r in records)
    assert records[0].answer_in_evidence and records[0].passage_ids[0] == "curie"
    row = summarize(records)[0]
    assert row["em"] is None and row["answer_in_evidence"] == 1.0


def test_bad_datasets_and_strategies_are_named(memory, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[{"question": "q?"}]')
    with pytest.raises(InputError, match="missing 'answer'"):
        load_dataset(bad)
    with pytest.raises(InputError, match="unknown strategy 'colbert'; known strategies: chain, bm25, dense"):
        memory.strategy("colbert")
    with pytest.raises(InputError, match="no such dataset file"):
        load_dataset(tmp_path / "missing.json")

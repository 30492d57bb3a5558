"""The evaluation harness with an LLM configured (fake chat model at the network boundary)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from engramdb.platform.errors import InputError
from engramdb.retrieval.eval.data import load_dataset
from engramdb.retrieval.eval.harness import EvalRunner, run_eval, summarize
from engramdb.retrieval.eval.report import markdown_table, token_curves, write_report

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
    runners = [
        EvalRunner(memory.strategy(n, chat_model=model, decomposition="llm"), "llm")
        for n in ("chain", "bm25", "dense")
    ]
    records = run_eval(runners, items, budgets=())  # one reader call per strategy, as scripted above
    summary = {row["strategy"]: row for row in summarize(records)}
    assert summary["chain"]["em"] == 1.0 and summary["bm25"]["em"] == 1.0 and summary["dense"]["em"] == 0.0
    assert summary["chain"]["refusal_accuracy"] == 1.0 and summary["dense"]["refusal_accuracy"] == 0.0
    chain_records = [r for r in records if r.strategy == "chain"]
    assert chain_records[0].answer_in_evidence and chain_records[0].evidence_tokens > 0
    assert summary["dense"]["recall@5"] is None  # plain datasets have no gold passages
    table = markdown_table(list(summary.values()))
    assert "refusal acc" in table and "| chain |" in table


def test_offline_baselines_answer_from_the_qa_pairs_of_their_passages(memory, dataset: Path) -> None:
    memory.ingest(DOCS)
    items = load_dataset(dataset)
    records = run_eval([EvalRunner(memory.strategy("bm25", decomposition="offline"), "offline")], items)
    assert all(r.answer is not None and (r.em is not None) == r.answerable for r in records)
    assert records[0].answer_in_evidence and records[0].passage_ids[0] == "curie"
    row = summarize(records)[0]
    assert (
        row["em"] is not None and row["answer_in_evidence"] == 1.0 and row["na_rate_answerable"] is not None
    )


MORE_DOCS = [
    {"id": "vistula", "title": "Vistula", "text": "The Vistula is the longest river in Poland, flowing through Warsaw and Krakow."},
    {"id": "nobel", "title": "Nobel Prize in Physics", "text": "The Nobel Prize in Physics has been awarded since 1901; Marie Curie shared it in 1903."},
    {"id": "paris", "title": "Paris", "text": "Paris is the capital of France. Marie Curie worked in Paris for most of her life."},
    {"id": "krakow", "title": "Krakow", "text": "Krakow is a city in southern Poland on the Vistula River."},
]  # fmt: skip


def test_passage_baselines_are_measured_at_each_budget_and_drawn_as_curves(
    memory, dataset: Path, tmp_path
) -> None:
    memory.ingest(DOCS + MORE_DOCS)
    items = load_dataset(dataset)
    records = run_eval(
        [EvalRunner(memory.strategy(n, decomposition="offline"), "offline") for n in ("dense", "bm25")], items
    )
    by_name: dict[str, list] = {}
    for r in records:
        by_name.setdefault(r.strategy, []).append(r)
    assert list(by_name) == ["dense@1", "dense@2", "dense@3", "dense", "bm25@1", "bm25@2", "bm25@3", "bm25"]
    for family in ("dense", "bm25"):
        runs = [by_name[f"{family}@{k}"] for k in (1, 2, 3)] + [by_name[family]]
        for k, mine in zip((1, 2, 3, 5), runs, strict=True):
            assert all(r.family == family and r.budget == k and 0 < len(r.passage_ids) <= k for r in mine)
    # a smaller budget is a real run whose passages are the top of the larger one's ranking (dense: no
    # score ties here; BM25 may order tied passages either way)
    dense_runs = [by_name[n] for n in ("dense@1", "dense@2", "dense@3", "dense")]
    for small, large in zip(dense_runs, dense_runs[1:], strict=False):
        for a, b in zip(small, large, strict=True):
            assert (
                b.passage_ids[: len(a.passage_ids)] == a.passage_ids and a.evidence_tokens < b.evidence_tokens
            )
    # dense always has k passages (6 documents), so each budget gives more evidence than the last
    assert [len(by_name[n][0].passage_ids) for n in ("dense@1", "dense@2", "dense@3", "dense")] == [
        1,
        2,
        3,
        5,
    ]
    summary = summarize(records)
    curves = token_curves(summary)
    assert list(curves) == ["dense", "bm25"]
    assert [row["budget"] for row in curves["dense"]] == [1, 2, 3, 5]
    tokens = [row["evidence_tokens_mean"] for row in curves["dense"]]
    assert tokens == sorted(tokens) and tokens[0] < tokens[-1]
    paths = write_report(tmp_path / "out", {"dataset": "qa"}, summary, records)
    assert paths["quality_vs_tokens"].stat().st_size > 0
    table = paths["markdown"].read_text()
    assert "| dense@1 |" in table and "| dense |" in table and "name@k" in table
    # a strategy that is not a passage baseline is one point, and an explicit budget list is honoured
    only_own = run_eval(
        [EvalRunner(memory.strategy("dense", decomposition="offline"), "offline")], items, budgets=(2,)
    )
    assert sorted({r.strategy for r in only_own}) == ["dense", "dense@2"]


def test_bad_datasets_and_strategies_are_named(memory, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[{"question": "q?"}]')
    with pytest.raises(InputError, match="missing 'answer'"):
        load_dataset(bad)
    with pytest.raises(InputError, match="unknown strategy 'colbert'; known strategies: chain, bm25, dense"):
        memory.strategy("colbert")
    with pytest.raises(InputError, match="no such dataset file"):
        load_dataset(tmp_path / "missing.json")

"""Strategy ``hypergraph`` with an LLM: langchain-core fake chat models replay realistic replies.

One model serves every call of a run, in order: the evolve call of step 0,
then per later step a plan call and an evolve call, then the answer. Entities
are named in the replies as the offline extractor stored them from
tests/fixtures/hypergraph_corpus.json.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage

from engramdb.platform.interfaces.memory import Memory
from engramdb.retrieval.hypergraph.llm import (
    EntityCatalog,
    MalformedReply,
    json_object,
    parse_operations,
    parse_plan,
)
from engramdb.retrieval.hypergraph.memory import WorkingMemory
from engramdb.retrieval.hypergraph.strategy import HypergraphRecipe, HypergraphStrategy
from engramdb.retrieval.rerankers import OfflineReranker
from engramdb.retrieval.results import NA
from engramdb.retrieval.strategy import AskContext
from tests.conftest import private_settings

CORPUS = json.loads((Path(__file__).parent / "fixtures" / "hypergraph_corpus.json").read_text())
QUESTION = (
    "Who was the first president of the association that published the Journal of Psychotherapy Integration?"
)
JPI, APA, HALL = (
    "Journal of Psychotherapy Integration",
    "American Psychological Association",
    "G. Stanley Hall",
)

EVOLVE_STEP0 = f"""The search found who publishes the journal. I will record that first.

```json
{{"operations": [{{"op": "insert", "id": "P1", "entities": ["{JPI}", "{APA}"],
  "description": "The {JPI} is a peer-reviewed journal published by the {APA}."}}]}}
```"""
PLAN_STEP1 = json.dumps({"sufficient": False, "subqueries": [
    {"mode": "local", "point": "P1", "query": f"first president of the {APA}"},
    {"mode": "global", "query": "G. Stanley Hall first president"},
]})  # fmt: skip
EVOLVE_STEP1 = json.dumps({"operations": [
    {"op": "insert", "id": "P2", "entities": [HALL, APA], "description": f"{HALL} was the first president of the {APA}."},
    {"op": "update", "point": "P1", "description": f"The {JPI}, established in 1991, is published by the {APA}."},
    {"op": "merge", "points": ["P1", "P2"],
     "description": f"The {JPI} is published by the {APA}, whose first president was {HALL}."},
]})  # fmt: skip
SUFFICIENT = '{"sufficient": true}'


@pytest.fixture(scope="module")
def hg_memory(tmp_path_factory, neo4j_server, settings, driver):
    cfg = private_settings(tmp_path_factory.mktemp("hg-llm-home"), neo4j_server, settings)
    mem = Memory(namespace=f"hgl{uuid.uuid4().hex[:12]}", settings=cfg)
    mem.ingest(CORPUS)
    yield mem
    mem.close()


def llm_strategy(mem: Memory, model, **recipe: object) -> HypergraphStrategy:
    context = AskContext(mem.graph, mem.vectors, mem.embedder, OfflineReranker(), chat_model=model)
    return HypergraphStrategy(context, HypergraphRecipe(**recipe))  # type: ignore[arg-type]


def run_nodes(mem: Memory) -> int:
    return mem.graph.driver.execute_query(
        "MATCH (n) WHERE n.namespace = $ns AND (n:Query OR n:MemoryPoint) RETURN count(n) AS n",
        ns=mem.namespace,
    ).records[0]["n"]


# --------------------------------------------------------------------------- whole runs


def test_insert_update_merge_over_local_and_global_steps_then_sufficiency(hg_memory: Memory) -> None:
    model = FakeListChatModel(
        responses=[EVOLVE_STEP0, PLAN_STEP1, EVOLVE_STEP1, SUFFICIENT, "G. Stanley Hall"]
    )
    result = llm_strategy(hg_memory, model).ask(QUESTION, trace=True)
    assert result.answer == HALL and result.answered_by == "llm"
    steps = result.details.steps
    assert [(op["op"], op["point"], op["version"]) for op in steps[0].operations] == [("insert", "P1", 1)]
    assert steps[0].operations[0]["entities"] == [JPI, APA]

    local, global_ = steps[1].subqueries
    assert (local["mode"], local["point"], global_["mode"], global_["point"]) == (
        "local",
        "P1",
        "global",
        None,
    )
    assert local["entities"][:2] == [JPI, APA]  # a local investigation starts from the point's entities
    assert not {JPI, APA} & set(global_["entities"])  # a global one looks only beyond memory
    assert HALL in local["entities"] and HALL in global_["entities"]

    ops = {(op["op"], op["point"]): op for op in steps[1].operations}
    assert list(ops) == [("insert", "P2"), ("update", "P1"), ("merge", "P3")]
    assert ops[("insert", "P2")]["entities"] == [HALL, APA]
    assert ops[("update", "P1")]["version"] == 2 and ops[("update", "P1")]["entities"] == [JPI, APA]
    assert "established in 1991" in ops[("update", "P1")]["description"]
    assert ops[("merge", "P3")]["merged_from"] == ["P1", "P2"]
    assert set(ops[("merge", "P3")]["entities"]) == {JPI, APA, HALL}

    assert steps[2].sufficient is True and result.details.stop_reason == "memory suffices"
    assert [p["point"] for p in result.details.points] == ["P3"]
    point_evidence = [e for e in result.evidence if e.kind == "memory_point"]
    assert [e.text for e in point_evidence] == [ops[("merge", "P3")]["description"]]
    assert point_evidence[0].doc_id in {"apa", "jpi"}
    passages = [e for e in result.evidence if e.kind == "passage"]
    assert passages and {"apa", "jpi"} & {e.doc_id for e in passages}
    assert result.details.llm_calls == 4 and result.details.llm_input_tokens > 0
    assert run_nodes(hg_memory) == 0


def test_malformed_reply_is_retried_once_then_the_step_records_the_error(hg_memory: Memory) -> None:
    model = FakeListChatModel(responses=[
        "Sure - I would add the journal and its publisher to memory.",  # no JSON: retried
        EVOLVE_STEP0,  # the retry succeeds
        '{"sufficient": "no"}',  # wrong type: retried
        '{"sufficient": false, "subqueries": [{"mode": "local", "point": "P9", "query": "first president"}]}',
        "N/A",  # the answer, from the memory so far
    ])  # fmt: skip
    result = llm_strategy(hg_memory, model).ask(QUESTION)
    steps = result.details.steps
    assert steps[0].error is None and [op["point"] for op in steps[0].operations] == ["P1"]
    assert steps[1].error is not None and "plan reply unusable after a retry" in steps[1].error
    assert "P9" in steps[1].error
    assert result.details.stop_reason.startswith("plan reply unusable")
    assert len(steps) == 2 and result.details.llm_calls == 4
    assert result.answer == NA
    assert [e.text for e in result.evidence if e.kind == "memory_point"] == [
        f"The {JPI} is a peer-reviewed journal published by the {APA}."
    ]


def test_evolve_unusable_twice_leaves_memory_as_it_was(hg_memory: Memory) -> None:
    bad_merge = json.dumps({"operations": [{"op": "merge", "points": ["P1", "P7"], "description": "x"}]})
    extra_key = json.dumps({"operations": [{"op": "update", "point": "P1", "description": "y", "why": "z"}]})
    model = FakeListChatModel(
        responses=[EVOLVE_STEP0, PLAN_STEP1, bad_merge, extra_key, "American Psychological Association"]
    )
    result = llm_strategy(hg_memory, model).ask(QUESTION)
    assert "evolve reply unusable after a retry" in (result.details.steps[1].error or "")
    assert result.details.steps[1].operations == []
    assert [p["point"] for p in result.details.points] == ["P1"]
    assert result.answer == APA


def test_provider_failure_mid_run_leaves_nothing_half_written(hg_memory: Memory) -> None:
    model = GenericFakeChatModel(messages=iter([AIMessage(EVOLVE_STEP0)]))  # the next call fails
    strategy = llm_strategy(hg_memory, model, keep_memory=True)
    with pytest.raises(Exception):  # noqa: B017 - whatever the provider raises must propagate
        strategy.ask(QUESTION)
    assert run_nodes(hg_memory) == 0


def test_kept_llm_run_carries_its_query_id(hg_memory: Memory) -> None:
    from engramdb.retrieval.hypergraph.memory import HypergraphStore, load_memory_run

    model = FakeListChatModel(responses=[EVOLVE_STEP0, SUFFICIENT, "American Psychological Association"])
    result = llm_strategy(hg_memory, model, keep_memory=True).ask(QUESTION)
    query_id = result.details.query_id
    assert query_id
    try:
        rows = load_memory_run(hg_memory.graph, query_id)
        assert [(r["operation"], r["point"], r["description"]) for r in rows] == [
            ("insert", "P1", f"The {JPI} is a peer-reviewed journal published by the {APA}.")
        ]
        assert sorted(rows[0]["entity_names"]) == sorted([JPI, APA])
    finally:
        HypergraphStore(hg_memory.graph, query_id).delete()


# --------------------------------------------------------------------------- strict parsing


def memory_with_points() -> tuple[WorkingMemory, EntityCatalog]:
    memory = WorkingMemory()
    memory.insert(["e1", "e2"], "one", step=0)
    memory.insert(["e2", "e3"], "two", step=0)
    memory.take_changes()
    catalog = EntityCatalog([("e1", "Alpha", "ORG"), ("e2", "Beta", ""), ("e3", "Gamma", ""),
                             ("e4", "Twin", "PERSON"), ("e5", "Twin", "ORG")])  # fmt: skip
    return memory, catalog


def test_json_object_tolerates_prose_and_fences() -> None:
    assert json_object('Here you go:\n```json\n{"sufficient": true}\n```\nHope this helps {not json}') == {
        "sufficient": True
    }
    assert json_object('{"a": {"b": [1, 2]}} trailing') == {"a": {"b": [1, 2]}}
    with pytest.raises(MalformedReply, match="no JSON object"):
        json_object("[1, 2] and nothing else")


def test_operations_resolve_names_and_handles() -> None:
    memory, catalog = memory_with_points()
    ops = parse_operations(json.dumps({"operations": [
        {"op": "insert", "id": "P3", "entities": ["alpha", "E3"], "description": "new"},
        {"op": "update", "point": "P1", "description": "better"},
        {"op": "merge", "points": ["P2", "P3"], "description": "joined"},
    ]}), memory, catalog)  # fmt: skip
    assert ops.inserts[0].entity_ids == ("e1", "e3") and ops.inserts[0].label == "P3"
    assert ops.updates[0].label == "P1" and ops.merges[0].labels == ("P2", "P3")
    assert parse_operations('{"operations": []}', memory, catalog).empty


@pytest.mark.parametrize(
    ("operations", "problem"),
    [
        ([{"op": "insert", "id": "P1", "entities": ["Alpha", "Beta"], "description": "d"}], "new point id"),
        ([{"op": "insert", "id": "X9", "entities": ["Alpha", "Beta"], "description": "d"}], "new point id"),
        ([{"op": "insert", "id": "P3", "entities": ["Alpha", "Delta"], "description": "d"}], "unknown entity"),
        ([{"op": "insert", "id": "P3", "entities": ["Alpha", "Twin"], "description": "d"}], "names 2 entities"),
        ([{"op": "insert", "id": "P3", "entities": ["Alpha", "E1"], "description": "d"}], "two distinct"),
        ([{"op": "update", "point": "P5", "description": "d"}], "no memory point 'P5'"),
        ([{"op": "update", "point": "P1", "description": "d", "entities": ["Gamma"]}], "wrong shape"),
        ([{"op": "merge", "points": ["P1"], "description": "d"}], "at least two"),
        ([{"op": "merge", "points": ["P1", "P2"], "description": "d"},
          {"op": "merge", "points": ["P2", "P1"], "description": "e"}], "merged twice"),
        ([{"op": "delete", "point": "P1"}], "wrong shape"),
        ([{"op": "update", "point": "P1", "description": ""}], "wrong shape"),
    ],
)  # fmt: skip
def test_invalid_operations_are_rejected_with_the_reason(operations: list, problem: str) -> None:
    memory, catalog = memory_with_points()
    with pytest.raises(MalformedReply, match=problem):
        parse_operations(json.dumps({"operations": operations}), memory, catalog)


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ('{"sufficient": true, "subqueries": [{"mode": "global", "query": "q"}]}', "one or the other"),
        ('{"sufficient": false}', "no subqueries"),
        ('{"sufficient": false, "subqueries": [{"mode": "local", "query": "q"}]}', "needs the id"),
        ('{"sufficient": false, "subqueries": [{"mode": "global", "query": "q", "point": "P1"}]}', "has no point"),
        ('{"sufficient": false, "subqueries": [{"mode": "sideways", "query": "q"}]}', "wrong shape"),
        ('{"sufficient": 1}', "wrong shape"),
        ('{"sufficient": false, "subqueries": [' + ", ".join(['{"mode": "global", "query": "q"}'] * 4) + "]}",
         "at most 3"),
    ],
)  # fmt: skip
def test_invalid_plans_are_rejected_with_the_reason(reply: str, problem: str) -> None:
    memory, _ = memory_with_points()
    with pytest.raises(MalformedReply, match=problem):
        parse_plan(reply, memory, max_subqueries=3)


def test_valid_plan_parses() -> None:
    memory, _ = memory_with_points()
    plan = parse_plan(
        'Plan: {"sufficient": false, "subqueries": [{"mode": "local", "point": "P2", "query": " q1 "}]}',
        memory,
        3,
    )
    assert not plan.sufficient and plan.subqueries[0].point == "P2" and plan.subqueries[0].text == "q1"
    assert parse_plan('{"sufficient": true}', memory, 3).sufficient

"""Strategy ``hypergraph`` offline: the evolving working memory, its Neo4j record, and its cascades.

The memory is five short documents (tests/fixtures/hypergraph_corpus.json)
ingested offline into the real Neo4j; the two-hop question needs a fact from
each of two documents.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from rich.console import Console

from engramdb.platform.errors import InputError
from engramdb.platform.interfaces.memory import Memory
from engramdb.retrieval.hypergraph.memory import (
    Fact,
    HypergraphStore,
    WorkingMemory,
    forget_document,
    load_memory_run,
    new_query_id,
    render_memory_run,
)
from engramdb.retrieval.hypergraph.offline import offline_answer, offline_plan, reached_points
from engramdb.retrieval.hypergraph.retrieval import MemoryRetriever, SubQuery, reciprocal_rank_fusion
from engramdb.retrieval.hypergraph.strategy import HypergraphRecipe, HypergraphStrategy
from engramdb.retrieval.render import render_result
from engramdb.retrieval.rerankers import OfflineReranker
from engramdb.retrieval.results import NA, QACandidate
from engramdb.retrieval.strategy import AskContext
from tests.conftest import private_settings

CORPUS = json.loads((Path(__file__).parent / "fixtures" / "hypergraph_corpus.json").read_text())
TWO_HOP = (
    "Who was the first president of the association that published the Journal of Psychotherapy Integration?"
)


@pytest.fixture(scope="module")
def hg_memory(tmp_path_factory, neo4j_server, settings, driver):
    """The five documents, ingested once for the module (tests that delete documents use ``memory``)."""
    cfg = private_settings(tmp_path_factory.mktemp("hg-home"), neo4j_server, settings)
    mem = Memory(namespace=f"hg{uuid.uuid4().hex[:12]}", settings=cfg)
    mem.ingest(CORPUS)
    yield mem
    mem.close()


def strategy_for(mem: Memory, **recipe: object) -> HypergraphStrategy:
    context = AskContext(mem.graph, mem.vectors, mem.embedder, OfflineReranker())
    return HypergraphStrategy(context, HypergraphRecipe(**recipe))  # type: ignore[arg-type]


def run_nodes(mem: Memory, namespace: str | None = None) -> dict[str, int]:
    rows = mem.graph.driver.execute_query(
        "MATCH (n) WHERE n.namespace = $ns AND (n:Query OR n:MemoryPoint) "
        "RETURN sum(CASE WHEN n:Query THEN 1 ELSE 0 END) AS queries, "
        "sum(CASE WHEN n:MemoryPoint THEN 1 ELSE 0 END) AS points",
        ns=namespace or mem.namespace,
    ).records[0]  # fmt: skip
    return {"queries": rows["queries"] or 0, "points": rows["points"] or 0}


def entity_id(mem: Memory, name: str) -> str:
    rows = mem.graph.driver.execute_query(
        "MATCH (e:Entity {namespace: $ns, name: $name}) RETURN e.id AS id", ns=mem.namespace, name=name
    ).records
    assert len(rows) == 1, f"expected one entity named {name!r}"
    return rows[0]["id"]


# --------------------------------------------------------------------------- the offline strategy


def test_two_hop_question_is_answered_from_memory_points_of_both_documents(hg_memory: Memory) -> None:
    result = strategy_for(hg_memory).ask(TWO_HOP, trace=True)
    assert result.answer == "G. Stanley Hall"
    assert result.strategy == "hypergraph" and result.answered_by == "offline"
    assert result.evidence and all(e.kind == "memory_point" for e in result.evidence)
    assert {e.doc_id for e in result.evidence[:2]} == {"apa", "jpi"}
    cited = {c.doc_id for c in result.citations}
    assert {"apa", "jpi"} <= cited <= {doc["id"] for doc in CORPUS}  # every citation resolves to a document
    details = result.details
    assert 0.0 < details.relevance_floor < 1.0
    step0 = details.steps[0]
    assert [(q["mode"], q["query"], q["point"]) for q in step0.subqueries] == [("global", TWO_HOP, None)]
    assert "Journal of Psychotherapy Integration" in step0.subqueries[0]["entities"]  # trace names them
    assert [op["op"] for op in step0.operations].count("insert") >= 2
    merges = [op for op in step0.operations if op["op"] == "merge"]
    assert merges, "the two facts sharing the association merge into one higher-order point"
    chain = {"G. Stanley Hall", "American Psychological Association", "Journal of Psychotherapy Integration"}
    assert any(chain <= set(op["entities"]) for op in merges)
    assert all(len(op["entities"]) >= 2 for s in details.steps for op in s.operations)
    assert step0.facts  # trace keeps the retrieved facts
    assert result.evidence_tokens > 0 and result.timings["total"] > 0
    console = Console(record=True, width=200)
    render_result(console, result, trace=True)
    printed = console.export_text()
    assert "memory step 0" in printed and "merge" in printed and "Answer: G. Stanley Hall" in printed


def test_with_a_budget_the_answer_rests_on_a_fact_the_evidence_holds(hg_memory: Memory) -> None:
    """An offline answer is read from the evidence a caller gets: at any budget the fact that gives
    it leads, whole, and the memory points after it do not repeat its sentence."""
    for budget in (48, 128, 512):
        result = strategy_for(hg_memory, budget=budget).ask(TWO_HOP)
        assert result.answer == "G. Stanley Hall"
        first = result.evidence[0]
        assert first.kind == "fact" and first.text.endswith("G. Stanley Hall.") and first.doc_id == "apa"
        assert first.chunk_ids and result.evidence_tokens <= budget
        assert "apa" in {c.doc_id for c in result.citations}
        assert all(first.text not in e.text for e in result.evidence[1:] if e.metadata.get("shortened"))


def test_offline_runs_are_deterministic(hg_memory: Memory) -> None:
    strategy = strategy_for(hg_memory)
    first, second = strategy.ask(TWO_HOP), strategy.ask(TWO_HOP)
    assert first.answer == second.answer
    assert [e.text for e in first.evidence] == [e.text for e in second.evidence]
    assert [s.operations for s in first.details.steps] == [s.operations for s in second.details.steps]
    assert first.details.stop_reason == second.details.stop_reason


def test_later_step_investigates_locally_and_explores_globally(hg_memory: Memory) -> None:
    result = strategy_for(hg_memory).ask("In which state did the performer of Hello Love die?")
    assert result.answer == "Tennessee"
    later = [s for s in result.details.steps if s.step > 0 and s.subqueries]
    assert later, "a second step ran"
    modes = {sub["mode"] for sub in later[0].subqueries}
    assert modes == {"local", "global"}
    local = next(sub for sub in later[0].subqueries if sub["mode"] == "local")
    assert local["point"] in {op["point"] for op in result.details.steps[0].operations}


def _fact(qa_id: str, question: str, subject: str, answer: str, score: float = 0.5) -> Fact:
    qa = QACandidate(qa_id=qa_id, question=question, answer_ids=(answer,), answer_names=(answer,),
                     answer_types=(), question_entity_ids=(subject,), doc_id="d", chunk_id="c")  # fmt: skip
    return Fact(qa, score, floor=0.1)


def _insert(memory: WorkingMemory, *facts: Fact) -> None:
    entities = sorted({e for f in facts for e in f.entity_ids})
    memory.insert(entities, " ".join(f.sentence for f in facts), step=0, facts=facts,
                  relevance=max(f.score for f in facts))  # fmt: skip


def test_points_about_unrelated_entities_neither_suffice_nor_lead_the_plan() -> None:
    """The first hop is in memory, and a point about someone else's birth covers "born": memory does not
    suffice until the birth joins the chain, and the local look is around the first hop, for "born"."""
    memory = WorkingMemory()
    memory.names.update({"Film X": "Film X", "Ann Roe": "Ann Roe", "Bo Vik": "Bo Vik", "1950": "1950"})
    _insert(memory, _fact("q1", "When was Bo Vik born?", "Bo Vik", "1950", score=0.6))
    _insert(memory, _fact("q2", "Who is the director of Film X?", "Film X", "Ann Roe", score=0.3))
    question = "When was the director of Film X born?"
    unrelated, first_hop = memory.ranked()
    assert reached_points(memory.ranked(), ["Film X"]) == [first_hop]
    assert reached_points(memory.ranked(), []) == [unrelated, first_hop]  # nothing named: every point counts
    assert reached_points(memory.ranked(), ["Elsewhere"]) == [unrelated, first_hop]

    sufficient, subs = offline_plan(question, memory, set(), local_points=2, named_ids=["Film X"])
    assert not sufficient
    assert [(s.mode, s.text, s.point) for s in subs] == [
        ("local", "born", first_hop.label),
        ("global", "born", None),
    ]
    # without the names, the unrelated point's "born" and the first hop's words cover the question
    assert offline_plan(question, memory, set(), local_points=2)[0]

    _insert(memory, _fact("q3", "When was Ann Roe born?", "Ann Roe", "1901", score=0.5))
    assert offline_plan(question, memory, set(), local_points=2, named_ids=["Film X"]) == (True, [])


def test_offline_answer_stops_at_the_chain_length_the_decomposition_finds() -> None:
    """Memory holds a fact past the chain's end (the father's abbey and its founding year): with two
    steps decomposed, the answer is the second hop's; without a bound of two or more, the farthest."""
    memory = WorkingMemory()
    father = _fact("q1", "Who is the father of Ann Roe?", "Ann Roe", "Bo Roe")
    died = _fact("q2", "When did Bo Roe die?", "Bo Roe", "1584")
    abbey = _fact("q3", "What did Bo Roe found?", "Bo Roe", "Roe Abbey")
    founded = _fact("q4", "When was Roe Abbey founded?", "Roe Abbey", "1490")
    for fact in (father, died, abbey, founded):
        _insert(memory, fact)
    typed = {"q2": 0.9, "q3": 0.2}  # the death year fits "When" better than the abbey does
    points = memory.ranked()
    assert offline_answer(points, ["Ann Roe"], typed, hops=2) == ("1584", died)
    assert offline_answer(points, ["Ann Roe"], typed) == ("1490", founded)
    assert offline_answer(points, ["Ann Roe"], typed, hops=1) == ("1490", founded)
    assert offline_answer(points, ["Ann Roe"], typed, hops=3) == ("1490", founded)


def test_question_about_things_memory_lacks_is_na(hg_memory: Memory) -> None:
    result = strategy_for(hg_memory).ask("Which spacecraft first landed on the moons of the planet Zorbulon?")
    assert result.answer == NA
    assert result.evidence == []


def test_one_step_stops_at_max_steps(hg_memory: Memory) -> None:
    result = strategy_for(hg_memory, max_steps=1).ask("In which state did the performer of Hello Love die?")
    assert len(result.details.steps) == 1 and result.details.stop_reason == "max_steps (1)"


def test_empty_question_and_unknown_recipe_keys_are_input_errors(hg_memory: Memory) -> None:
    from engramdb.retrieval.strategy import make_recipe

    with pytest.raises(InputError, match="empty"):
        strategy_for(hg_memory).ask("   ")
    with pytest.raises(InputError, match="max_step"):
        make_recipe("hypergraph", {"max_step": 2})


# --------------------------------------------------------------------------- retrieval modes


def test_global_exploration_skips_memory_and_local_stays_in_the_neighbourhood(hg_memory: Memory) -> None:
    graph = hg_memory.graph
    jpi, apa, tahoe = (entity_id(hg_memory, n) for n in ("Journal of Psychotherapy Integration",
                                                          "American Psychological Association", "Lake Tahoe"))  # fmt: skip
    store = HypergraphStore(graph, new_query_id())
    store.create(TWO_HOP, "hypergraph", 3)
    try:
        memory = WorkingMemory()
        memory.insert([jpi, apa], "The journal is published by the association.", step=0)
        memory.insert([apa, tahoe], "An unrelated pairing, only in working memory.", step=0)
        store.write_step(0, memory.take_changes())
        retriever = MemoryRetriever(AskContext(graph, hg_memory.vectors, hg_memory.embedder, OfflineReranker()),
                                    HypergraphRecipe())  # fmt: skip

        (found,) = retriever.find_entities([SubQuery("global", TWO_HOP)], memory, store)
        assert found.entities and not {e for e, _, _ in found.entities} & memory.entity_ids()

        (local,) = retriever.find_entities([SubQuery("local", "first president", "P1")], memory, store)
        ids = [e for e, _, _ in local.entities]
        assert ids[:2] == [jpi, apa] and local.anchors == (jpi, apa)
        graph_neighbours = {r["id"] for r in graph.driver.execute_query(
            "MATCH (a:Entity {namespace: $ns})-[:ROLE_IN]->(:VerbPhrase)<-[:ROLE_IN]-(n:Entity) "
            "WHERE a.id IN $anchors RETURN DISTINCT n.id AS id", ns=graph.namespace, anchors=[jpi, apa]).records}  # fmt: skip
        assert set(ids[2:]) <= graph_neighbours | {tahoe}
        assert entity_id(hg_memory, "G. Stanley Hall") in ids
        rows = {r["id"]: r["via"] for r in store.neighbourhood([jpi, apa], per_anchor=50, limit=100)}
        assert rows[tahoe] == ["memory"]  # a neighbour through working memory only
        assert tahoe not in graph_neighbours
        facts = retriever.collect([local], ["first president"])[0].facts
        assert facts and all(not set(f.qa.answer_ids) <= {jpi, apa} for f in facts)
    finally:
        store.delete()


def test_reciprocal_rank_fusion_orders_by_summed_reciprocal_ranks() -> None:
    assert reciprocal_rank_fusion([["a", "b", "c"], ["b", "a"], ["b"]], k=1) == ["b", "a", "c"]
    assert reciprocal_rank_fusion([["x", "y"], ["y", "x"]]) == ["x", "y"]  # tie: first seen first


# --------------------------------------------------------------------------- the stored hypergraph


def test_default_run_leaves_nothing_behind(hg_memory: Memory) -> None:
    before = run_nodes(hg_memory)
    result = strategy_for(hg_memory).ask(TWO_HOP)
    assert result.details.query_id is None
    assert any(s.operations for s in result.details.steps)  # points were written during the run
    assert run_nodes(hg_memory) == before == {"queries": 0, "points": 0}


def test_kept_run_is_a_hypergraph_in_neo4j_and_replays_in_order(hg_memory: Memory) -> None:
    result = strategy_for(hg_memory, keep_memory=True).ask(TWO_HOP)
    query_id = result.details.query_id
    assert query_id and result.evidence[0].id.startswith(query_id)
    graph, driver = hg_memory.graph, hg_memory.graph.driver
    try:
        points = driver.execute_query(
            "MATCH (:Query {namespace: $ns, id: $q})-[:HAS_POINT]->(p:MemoryPoint {namespace: $ns}) "
            "OPTIONAL MATCH (p)-[:INVOLVES]->(e:Entity {namespace: $ns}) "
            "OPTIONAL MATCH (p)-[:MERGED_FROM]->(s:MemoryPoint {namespace: $ns}) "
            "RETURN p.point AS point, p.version AS version, p.operation AS op, p.active AS active, "
            "count(DISTINCT e) AS entities, collect(DISTINCT s.point) AS sources",
            ns=graph.namespace, q=query_id,
        ).records  # fmt: skip
        assert points and all(p["entities"] >= 2 for p in points)
        ops = [op for s in result.details.steps for op in s.operations]
        assert len(points) == len(ops)
        for op in ops:
            stored = next(p for p in points if (p["point"], p["version"]) == (op["point"], op["version"]))
            assert stored["op"] == op["op"]
            assert sorted(stored["sources"]) == sorted(
                op["merged_from"]
            )  # merged points link to their sources
        final = {p["point"] for p in points if p["active"]}
        assert {p["point"] for p in result.details.points} <= final  # the evidence points are the active ones
        assert all(not p["active"] for p in points if any(p["point"] in o["merged_from"] for o in ops))

        rows = load_memory_run(graph, query_id)
        assert [(r["step"], r["seq"]) for r in rows] == sorted((r["step"], r["seq"]) for r in rows)
        assert [(r["operation"], r["point"], r["version"]) for r in rows] == [
            (op["op"], op["point"], op["version"]) for op in ops
        ]
        assert (
            rows[0]["question"] == TWO_HOP and rows[0]["strategy"] == "hypergraph" and rows[0]["created_at"]
        )
        console = Console(record=True, width=200)
        render_memory_run(console, rows)
        text = console.export_text()
        assert TWO_HOP in text and "merge" in text and "G. Stanley Hall" in text

        other = graph.with_namespace(f"other{uuid.uuid4().hex[:8]}")
        with pytest.raises(InputError, match="no hypergraph run"):
            load_memory_run(other, query_id)
        assert run_nodes(hg_memory, other.namespace) == {"queries": 0, "points": 0}
    finally:
        HypergraphStore(graph, query_id).delete()
    assert run_nodes(hg_memory) == {"queries": 0, "points": 0}


def test_unknown_run_is_an_input_error(hg_memory: Memory) -> None:
    with pytest.raises(InputError, match="keep_memory"):
        load_memory_run(hg_memory.graph, "hg-does-not-exist")


# --------------------------------------------------------------------------- document deletes


def points_of(mem: Memory, query_id: str) -> list[dict]:
    return [dict(r) for r in mem.graph.driver.execute_query(
        "MATCH (p:MemoryPoint {namespace: $ns, query_id: $q}) "
        "OPTIONAL MATCH (p)-[:INVOLVES]->(e:Entity) OPTIONAL MATCH (p)-[:SUPPORTED_BY]->(c:Chunk) "
        "RETURN p.point AS point, p.version AS version, p.doc_ids AS doc_ids, "
        "collect(DISTINCT e.name) AS entities, collect(DISTINCT c.doc_id) AS chunk_docs",
        ns=mem.namespace, q=query_id).records]  # fmt: skip


def test_forget_document_cascades_into_kept_memory(memory: Memory) -> None:
    memory.ingest(CORPUS)
    query_id = strategy_for(memory, keep_memory=True).ask(TWO_HOP).details.query_id
    before = points_of(memory, query_id)
    assert any("apa" in p["doc_ids"] for p in before) and any(p["doc_ids"] == ["apa"] for p in before)

    report = forget_document(memory.graph, "apa")  # before the document's own delete
    after = points_of(memory, query_id)
    assert report["removed"] >= 1 and len(after) == len(before) - report["removed"]
    for point in after:
        assert "apa" not in point["doc_ids"] and "apa" not in point["chunk_docs"]
        assert len(point["entities"]) >= 2
        assert "G. Stanley Hall" not in point["entities"]  # only the deleted document mentioned him
    journal_and_publisher = {"Journal of Psychotherapy Integration", "American Psychological Association"}
    assert any(set(p["entities"]) == journal_and_publisher for p in after)

    memory.delete("apa")  # Memory.delete runs the cascade too: nothing is left for it to do
    assert points_of(memory, query_id) == after
    assert forget_document(memory.graph, "apa")["removed"] == 0  # idempotent

    for doc_id in ("jpi", "hank", "hello", "tahoe"):  # the order Memory.delete uses: cascade, then delete
        report = forget_document(memory.graph, doc_id)
        assert memory.ingestor.delete(doc_id) is not None
        left = points_of(memory, query_id)
        assert report["removed"] == len(after) - len(left)
        assert all(len(p["entities"]) >= 2 and doc_id not in p["doc_ids"] + p["chunk_docs"] for p in left)
        after = left
    assert points_of(memory, query_id) == []
    rows = load_memory_run(memory.graph, query_id)  # the run's Query stays, with no points
    assert rows == [{**rows[0], "id": None}] and rows[0]["question"] == TWO_HOP
    HypergraphStore(memory.graph, query_id).delete()


def test_forget_document_needs_an_id(memory: Memory) -> None:
    with pytest.raises(InputError):
        forget_document(memory.graph, " ")

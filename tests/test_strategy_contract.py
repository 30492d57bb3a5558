"""The contract every registered ask strategy and memory stage keeps.

Parametrised over the registries, so a new strategy or stage is checked the
moment it registers: it answers (or says N/A, or is retrieval-only), its
evidence carries provenance that resolves to stored chunks, it never sees
another namespace, it refuses an empty question clearly; and deleting a
document leaves nothing of it in any stage, graph or vector store.
"""

from __future__ import annotations

import uuid

import pytest
from pydantic import SecretStr

from engramdb.ingestion.stages.base import make_stage, stage_names
from engramdb.platform.embedders import count_tokens
from engramdb.platform.errors import InputError
from engramdb.platform.interfaces.memory import Memory
from engramdb.platform.storage import CHUNK_COLLECTION, QA_COLLECTION
from engramdb.retrieval.results import NA
from engramdb.retrieval.strategy import strategy_names

DOCS = [
    {"id": "curie", "title": "Marie Curie",
     "text": "Marie Curie was born in Warsaw in 1867. She won the Nobel Prize in Physics in 1903. "
             "Marie Curie married Pierre Curie in 1895."},
    {"id": "warsaw", "title": "Warsaw",
     "text": "Warsaw is the capital of Poland. Warsaw lies on the Vistula River."},
    {"id": "vistula", "title": "Vistula",
     "text": "The Vistula is the longest river in Poland. The Vistula flows into the Baltic Sea."},
]  # fmt: skip
OTHER = [
    {"id": "oslo", "title": "Oslo", "text": "Oslo is the capital of Norway. Oslo lies on the Oslofjord."}
]


@pytest.fixture(scope="module")
def memories(tmp_path_factory, neo4j_server, settings, driver):
    """Two namespaces in one store: the contract's memory, and a neighbour it must never see."""
    isolated = settings.model_copy(update={
        "home": tmp_path_factory.mktemp("contract") / "home", "neo4j_uri": neo4j_server.bolt_uri,
        "neo4j_password": SecretStr(neo4j_server.password()),
    })  # fmt: skip
    main = Memory(namespace=f"c{uuid.uuid4().hex[:10]}", settings=isolated)
    other = Memory(namespace=f"o{uuid.uuid4().hex[:10]}", settings=isolated)
    main.ingest(DOCS)
    other.ingest(OTHER)
    yield main, other
    main.close()
    other.close()


@pytest.mark.parametrize("name", strategy_names())
def test_strategy_answers_with_provenance_that_resolves(memories, name: str) -> None:
    memory, _ = memories
    result = memory.ask("Where was Marie Curie born?", strategy=name)
    assert result.strategy == name
    assert result.answer is None or isinstance(result.answer, str) and result.answer.strip()
    assert result.evidence, f"{name} returned no evidence for a question its memory answers"
    chunk_ids = {c for e in result.evidence for c in e.chunk_ids}
    stored = {
        r["chunk_id"]: r["doc_id"]
        for r in memory.graph.read("traversals/citations", chunk_ids=sorted(chunk_ids))
    }
    assert chunk_ids and chunk_ids <= set(stored), "evidence names chunks that are not in memory"
    for e in result.evidence:
        assert e.kind and e.text
        # one document's evidence names it; evidence spanning documents (a cluster) may leave it empty
        assert e.doc_id in {d["id"] for d in DOCS} or (e.doc_id == "" and len(e.chunk_ids) >= 1)
        assert all(stored[c] == e.doc_id for c in e.chunk_ids) or e.doc_id == ""
    assert {c.doc_id for c in result.citations} <= {d["id"] for d in DOCS}
    assert result.evidence_tokens > 0
    if result.answer not in (None, NA):
        assert "Warsaw" in " ".join(e.text for e in result.evidence)


@pytest.mark.parametrize("budget", [16, 40, 128, 512])
@pytest.mark.parametrize("name", strategy_names())
def test_a_budget_is_never_exceeded_and_nothing_is_repeated(memories, name: str, budget: int) -> None:
    memory, _ = memories
    result = memory.ask("In which country was Marie Curie born?", strategy=name, budget=budget)
    texts = [e.text for e in result.evidence]
    assert result.evidence_tokens == count_tokens(texts) <= budget
    flat = [" ".join(t.lower().split()) for t in texts]
    assert all(a not in b for i, a in enumerate(flat) for j, b in enumerate(flat) if i != j)
    if budget >= 40:
        assert result.evidence, f"{name} filled no evidence into {budget} tokens"
    stored = {r["chunk_id"] for r in memory.graph.read("traversals/citations", chunk_ids=sorted(
        {c for e in result.evidence for c in e.chunk_ids}))}  # fmt: skip
    assert {c for e in result.evidence for c in e.chunk_ids} <= stored


@pytest.mark.parametrize("budget", [None, 128])
@pytest.mark.parametrize("name", strategy_names())
def test_citations_name_each_evidence_chunks_document_as_stored(
    memories, name: str, budget: int | None
) -> None:
    """Strategies cite from rows they already read where they can (no second read): the result
    must still be exactly one citation per (evidence item, chunk), with the stored document."""
    memory, _ = memories
    result = memory.ask("In which country was Marie Curie born?", strategy=name, budget=budget)
    wanted = {(e.id, c) for e in result.evidence for c in e.chunk_ids}
    stored = {
        r["chunk_id"]: r
        for r in memory.graph.read("traversals/citations", chunk_ids=sorted({c for _, c in wanted}))
    }
    got = [(c.evidence_id, c.chunk_id) for c in result.citations]
    assert sorted(got) == sorted(wanted) and len(set(got)) == len(got)
    for c in result.citations:
        row = stored[c.chunk_id]
        assert (c.doc_id, c.title, c.source) == (row["doc_id"], row["title"] or "", row["source"] or "")


@pytest.mark.parametrize("budget", [None, 128])
def test_every_pair_of_the_best_chain_is_evidence_in_chain_order(memories, budget: int | None) -> None:
    memory, _ = memories
    result = memory.ask("Which river does the city where Marie Curie was born lie on?", strategy="chain",
                        decomposition=[["Where was Marie Curie born?", "Which river does <ENTITY_Q1> lie on?"]],
                        budget=budget)  # fmt: skip
    best = result.details.chains[0]
    ids = [e.id for e in result.evidence]
    positions = [ids.index(step.qa.qa_id) for step in best.steps]
    assert positions == sorted(positions) and positions[0] == 0
    if budget is not None:  # each pair is followed by the sentence it was drawn from
        for step in best.steps:
            following = result.evidence[ids.index(step.qa.qa_id) + 1]
            assert following.kind == "sentence" and following.metadata["qa_id"] == step.qa.qa_id


@pytest.mark.parametrize("name", strategy_names())
def test_strategy_never_sees_another_namespace(memories, name: str) -> None:
    memory, other = memories
    result = other.ask("Where was Marie Curie born?", strategy=name)
    items = result.evidence + result.near_misses
    assert all(e.doc_id in ("oslo", "") for e in items)
    assert all(c.startswith("oslo#") for e in items for c in e.chunk_ids)
    assert result.answer != "Warsaw"


@pytest.mark.parametrize("name", strategy_names())
@pytest.mark.parametrize("question", ["", "   \n"])
def test_empty_question_is_a_clear_error(memories, name: str, question: str) -> None:
    memory, _ = memories
    with pytest.raises(InputError, match="empty"):
        memory.ask(question, strategy=name)


def test_unknown_strategy_and_bad_recipe_are_named(memories) -> None:
    memory, _ = memories
    with pytest.raises(InputError, match="unknown strategy 'nope'; known strategies: chain, bm25, dense"):
        memory.ask("q?", strategy="nope")
    with pytest.raises(InputError, match="invalid settings for strategy 'chain'.*beam"):
        memory.ask("q?", strategy="chain", beam=3)


def test_ingest_runs_every_stage(memories) -> None:
    memory, _ = memories
    assert memory.missing_stages() == {name: 0 for name in stage_names()}


def _document_footprint(memory: Memory, doc_id: str) -> dict[str, int]:
    """Everything in the graph and the vector store that still refers to one document."""
    counts = dict(memory.graph.read("traversals/document_footprint", doc_id=doc_id)[0])
    stage_collections = [c for n in stage_names() for c in make_stage(n, memory.stage_context).collections]
    for collection in [QA_COLLECTION, CHUNK_COLLECTION, *stage_collections]:
        counts[f"vectors:{collection}"] = memory.vectors.count(
            collection, memory.namespace, where={"doc_id": doc_id}
        )
    return counts


def test_delete_leaves_nothing_of_the_document_in_any_stage(isolated_settings, namespace: str) -> None:
    with Memory(namespace=namespace, settings=isolated_settings) as memory:
        memory.ingest(DOCS)
        before = _document_footprint(memory, "curie")
        assert (
            before["chunks"] > 0
            and before[f"vectors:{QA_COLLECTION}"] > 0
            and before[f"vectors:{CHUNK_COLLECTION}"] > 0
        )
        stage_nodes = memory.graph.read("traversals/stage_nodes_of_document", doc_id="curie")[0]["count"]
        assert stage_nodes > 0  # gists, clusters... hang off the document's chunks
        memory.delete("curie")
        after = _document_footprint(memory, "curie")
        assert after == {key: 0 for key in after}, after
        assert memory.graph.read("traversals/stage_nodes_of_document", doc_id="curie")[0]["count"] == 0
        # what other documents hold is intact, and every stage is still up to date
        assert _document_footprint(memory, "warsaw")["chunks"] > 0
        assert all(make_stage(n, memory.stage_context).missing() == 0 for n in stage_names())

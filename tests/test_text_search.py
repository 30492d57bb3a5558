"""Keyword (BM25) search over entities and passages, on real small memories (offline extractor).

Namespaces may hold ``_``, ``-`` and ``.``; names may be accented or CJK;
questions may be long or full of Lucene syntax. None of that may silently
return nothing or crash.
"""

from __future__ import annotations

import unicodedata
import uuid

import pytest

from engramdb.ingestion.writer import namespace_key
from engramdb.platform.graph import apply_schema
from engramdb.platform.interfaces.memory import Memory
from engramdb.retrieval.evidence import dense_passage_rows
from engramdb.retrieval.hop_retrieval import MAX_QUERY_TERMS, HopRetriever, lucene_query, query_terms
from engramdb.retrieval.passages import memory_version_of

CURIE = {
    "id": "curie",
    "title": "Marie Curie",
    "text": "Marie Curie was born in Warsaw in 1867. She won the Nobel Prize in Physics in 1903.",
}
WARSAW = {
    "id": "warsaw",
    "title": "Warsaw",
    "text": "Warsaw is the capital of Poland. Warsaw lies on the Vistula River.",
}
SENGHOR = {"id": "senghor", "title": "Léopold Sédar Senghor",
           "text": "Léopold Sédar Senghor was born in Joal in 1906. Senghor became the first president of Senegal in 1960."}  # fmt: skip
BRUCE_LEE = {"id": "lee", "title": "李小龍",
             "text": "李小龍 was born in San Francisco in 1940. 李小龍 starred in the film Enter the Dragon."}  # fmt: skip
PASSAGE_FIELDS = {"title": 1.0, "text": 1.0}


def entity_hits(memory: Memory, question: str) -> list[str]:
    """Names of the entities the hop retriever's BM25 query finds, best first."""
    lucene = lucene_query(question, memory.namespace)
    if lucene is None:
        return []
    rows = memory.graph.read("traversals/entity_bm25_many", queries=[{"i": 0, "lucene": lucene}], limit=20)
    ids = [r["id"] for r in sorted(rows, key=lambda r: -r["score"])]
    names = {r["id"]: r["name"] for r in memory.graph.read("traversals/entity_names", ids=ids)}
    return [names[i] for i in ids]


def passage_hits(memory: Memory, question: str) -> list[str]:
    """Document ids of the passages BM25 finds (the query the ``bm25`` strategy runs), best first."""
    lucene = lucene_query(question, memory.namespace, PASSAGE_FIELDS)
    if lucene is None:
        return []
    return [r["doc_id"] for r in memory.graph.read("traversals/chunk_bm25", lucene=lucene, limit=5)]


_DOC_CHUNK_ENTITY = (
    "MATCH (n:Document {namespace: $ns}) RETURN n UNION MATCH (n:Chunk {namespace: $ns}) RETURN n "
    "UNION MATCH (n:Entity {namespace: $ns}) RETURN n"
)


def stored_keys(driver, namespace: str) -> list[str]:
    """The distinct namespace keys on a namespace's documents, chunks and entities."""
    records, _, _ = driver.execute_query(
        f"CALL () {{ {_DOC_CHUNK_ENTITY} }} RETURN collect(DISTINCT n.namespace_key) AS keys", ns=namespace
    )
    return records[0]["keys"]


@pytest.fixture
def memories(isolated_settings):
    opened: list[Memory] = []

    def open_one(namespace: str) -> Memory:
        memory = Memory(namespace, isolated_settings)
        opened.append(memory)
        return memory

    yield open_one
    for memory in opened:
        memory.close()


def test_namespaces_with_underscore_dot_and_dash_find_their_entities(memories) -> None:
    tag = uuid.uuid4().hex[:8]
    for namespace in (f"kw_{tag}", f"kw.{tag}.v1", f"Kw-{tag}_2.0"):
        memory = memories(namespace)
        memory.ingest([CURIE, WARSAW])
        assert "Marie Curie" in entity_hits(memory, "Where was Marie Curie born?"), namespace
        assert passage_hits(memory, "Where was Marie Curie born?")[0] == "curie", namespace
        # the ask path: the hop retriever's BM25 candidates come from the entity index
        vector = memory.embedder.embed_query("Where was Marie Curie born?")
        candidates = HopRetriever(memory.graph, memory.vectors).retrieve(
            "Where was Marie Curie born?", vector
        )
        assert any("bm25" in c.via and "Warsaw" in c.answer_names for c in candidates), namespace


def test_the_lucene_filter_alone_keeps_look_alike_namespaces_apart(memories, driver) -> None:
    tag = uuid.uuid4().hex[:8]
    with_curie = memories(f"ns_{tag}")
    with_curie.ingest([CURIE])
    # the old query turned all of these into the phrase "ns <tag>" (and Lucene folds case)
    look_alikes = [memories(n) for n in (f"ns-{tag}", f"ns.{tag}", f"NS_{tag}")]
    for memory in look_alikes:
        memory.ingest([WARSAW])
        lucene = lucene_query("Marie Curie Warsaw", memory.namespace)
        records, _, _ = driver.execute_query(
            "CALL db.index.fulltext.queryNodes('entity_search', $lucene, {limit: 50}) YIELD node "
            "RETURN DISTINCT node.namespace AS ns",
            lucene=lucene,
        )
        assert [r["ns"] for r in records] == [
            memory.namespace
        ]  # no other namespace, before any Cypher filter
        assert "Marie Curie" not in entity_hits(memory, "Who is Marie Curie?")
    assert stored_keys(driver, with_curie.namespace) == [namespace_key(with_curie.namespace)]


def test_memory_written_before_the_namespace_key_gets_it_from_the_migration(memories, driver) -> None:
    memory = memories(f"old_{uuid.uuid4().hex[:8]}.Z-9")
    memory.ingest([CURIE, WARSAW])
    driver.execute_query(f"CALL () {{ {_DOC_CHUNK_ENTITY} }} REMOVE n.namespace_key", ns=memory.namespace)
    assert entity_hits(memory, "Where was Marie Curie born?") == []  # what stored memory looked like
    apply_schema(driver)
    assert "Marie Curie" in entity_hits(memory, "Where was Marie Curie born?")
    assert stored_keys(driver, memory.namespace) == [
        namespace_key(memory.namespace)
    ]  # Cypher spells it as Python


def test_accented_and_cjk_names_are_found(memories) -> None:
    memory = memories(f"kw{uuid.uuid4().hex[:8]}")
    memory.ingest([SENGHOR, BRUCE_LEE, CURIE])
    names = {r["name"] for r in memory.driver.execute_query(
        "MATCH (e:Entity {namespace: $ns}) RETURN e.name AS name", ns=memory.namespace).records}  # fmt: skip
    assert {"Léopold Sédar Senghor", "李小龍"} <= names  # what the offline extractor made of the passages

    assert entity_hits(memory, "Where was Léopold born?")[0] == "Léopold Sédar Senghor"
    decomposed = unicodedata.normalize("NFD", "Where was Léopold born?")  # e + combining accent
    assert entity_hits(memory, decomposed)[0] == "Léopold Sédar Senghor"
    assert passage_hits(memory, "Léopold")[0] == "senghor"
    assert entity_hits(memory, "李小龍在哪裡出生?")[0] == "李小龍"  # a CJK question, no spaces at all
    assert passage_hits(memory, "李小龍出生於哪一年?")[0] == "lee"


def test_a_300_word_question_does_not_crash_and_still_finds_the_name(memories, musique_corpus) -> None:
    memory = memories(f"kw{uuid.uuid4().hex[:8]}")
    memory.ingest([CURIE, WARSAW])
    filler = list(
        dict.fromkeys(w.strip(".,;:()\"'").lower() for p in musique_corpus[:80] for w in p["text"].split())
    )
    words = [w for w in filler if w.isalpha()][:300]
    question = " ".join(words) + " where was Marie Curie born"
    assert len(set(question.split())) > 300
    assert len(query_terms(question)) == MAX_QUERY_TERMS  # capped, names kept first
    assert "Marie Curie" in entity_hits(memory, question)
    assert "curie" in passage_hits(memory, question)


@pytest.mark.parametrize(
    "question",
    [
        'Marie AND Curie OR NOT ( ) : " * ? ~ ^ \\ / born',
        "Where was (Marie Curie) born? [1867] {Warsaw} +Nobel -Prize && || ! title:Warsaw*",
        'name:"Marie Curie"~2^10 AND namespace_key:other',
    ],
)
def test_lucene_syntax_in_a_question_is_just_text(memories, question: str) -> None:
    memory = memories(f"kw{uuid.uuid4().hex[:8]}")
    memory.ingest([CURIE, WARSAW])
    assert "Marie Curie" in entity_hits(memory, question)
    assert "curie" in passage_hits(memory, question)


def test_a_question_of_only_syntax_and_stop_words_searches_nothing() -> None:
    assert lucene_query('( ) : " * ? ~ ^ \\ / AND OR NOT the of', "kw_x") is None
    assert lucene_query("AND Curie", "kw_x") == (
        f"+namespace_key:{namespace_key('kw_x')} +(name:(curie)^2 aliases_text:(curie)^2 roles_text:(curie) "
        "states_text:(curie))"
    )


def test_passages_of_equal_score_come_in_id_order_whatever_order_they_were_written(memories) -> None:
    """Lucene orders equal scores by its internal document numbers, which change as its segments
    merge; the query orders them by id, so the same memory always gives the same passages."""
    memory = memories(f"ties_{uuid.uuid4().hex[:8]}")
    text = "The lighthouse keeper of Skerryvore kept a log of every storm."
    docs = [{"id": f"tie-{i}", "title": "Skerryvore log", "text": text} for i in (7, 3, 5, 1, 6, 2, 4, 0)]
    memory.ingest(docs)  # written in an order that is not the ids' order
    lucene = lucene_query("Who kept a log of storms at Skerryvore?", memory.namespace, PASSAGE_FIELDS)
    every = memory.graph.read("traversals/chunk_bm25", lucene=lucene, limit=8)
    assert len(every) == 8 and len({r["score"] for r in every}) == 1  # all eight tie
    top = memory.graph.read("traversals/chunk_bm25", lucene=lucene, limit=3)
    assert [r["chunk_id"] for r in top] == sorted(r["chunk_id"] for r in every)[:3]


def test_bm25_passages_carry_their_document_so_citing_them_reads_nothing_more(memories) -> None:
    memory = memories(f"cite_{uuid.uuid4().hex[:8]}")
    memory.ingest([{"id": "log-1", "title": "Skerryvore log", "text": "The keeper of Skerryvore kept a storm log."},
                   {"id": "log-2", "title": "Bell Rock log", "text": "The Bell Rock keeper logged fog."}])  # fmt: skip
    lucene = lucene_query("Who kept a storm log at Skerryvore?", memory.namespace, PASSAGE_FIELDS)
    rows = memory.graph.read("traversals/chunk_bm25", lucene=lucene, limit=5)
    assert rows[0]["doc_id"] == "log-1" and rows[0]["doc_title"] == "Skerryvore log"
    assert all("source" in r for r in rows)
    result = memory.ask("Who kept a storm log at Skerryvore?", strategy="bm25")
    assert [(c.doc_id, c.title) for c in result.citations][0] == ("log-1", "Skerryvore log")


def test_bm25_and_dense_passages_carry_the_memory_version_their_transaction_read(memories) -> None:
    """The offline answer's N/A bar is cached per memory version; the BM25 and dense passage reads
    return that version beside their rows, so the bar needs no read of its own, and it is never
    stale: an ingest by any process changes the version the next passage read returns."""
    memory = memories(f"ver_{uuid.uuid4().hex[:8]}")
    memory.ingest(
        [{"id": "log-1", "title": "Skerryvore log", "text": "The keeper of Skerryvore kept a storm log."}]
    )
    question = "Who kept a storm log at Skerryvore?"
    lucene = lucene_query(question, memory.namespace, PASSAGE_FIELDS)

    def versions() -> tuple[str | None, str | None]:
        bm25 = memory.graph.read("traversals/chunk_bm25", lucene=lucene, limit=5)
        dense = dense_passage_rows(memory.graph, memory.vectors, memory.embedder, question, 5)
        return memory_version_of(bm25), memory_version_of(dense)

    before = versions()
    assert before == (memory.graph.memory_version(),) * 2
    memory.ingest([{"id": "log-2", "title": "Bell Rock log", "text": "The Bell Rock keeper logged fog."}])
    after = versions()
    assert after == (memory.graph.memory_version(),) * 2 and after != before
    assert memory_version_of([]) is None  # no passage found: the bar reads the version itself

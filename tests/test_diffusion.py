"""The ``gists`` memory stage and the ``diffusion`` strategy on small real memories in Neo4j + Qdrant."""

from __future__ import annotations

import json
import re
import uuid

import numpy as np
import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage
from rich.console import Console

from engramdb.ingestion.extraction.cache import ExtractionCache
from engramdb.ingestion.stages.base import StageChunk, StageContext
from engramdb.ingestion.stages.gists import (
    FACT_COLLECTION,
    GIST_COLLECTION,
    ChunkGSW,
    GistStage,
    Mention,
    QARef,
    VerbPhraseGSW,
    _contains,
    chunk_facts,
    offline_gist,
    parse_gist_reply,
    read_gsw,
)
from engramdb.platform.cypher_files import query
from engramdb.platform.interfaces.memory import Memory
from engramdb.platform.storage import CHUNK_COLLECTION, QA_COLLECTION
from engramdb.retrieval.diffusion.strategy import (
    DiffusionStrategy,
    dense_tier,
    passage_similarity,
    snapshot_cache,
)
from engramdb.retrieval.packing import PASSAGE_POOL
from engramdb.retrieval.render import render_result
from engramdb.retrieval.rerankers import OfflineReranker
from engramdb.retrieval.results import NA
from engramdb.retrieval.strategy import AskContext
from tests.conftest import private_settings

CORPUS = [
    {"title": "Big Eyes", "text": "Big Eyes is a 2014 American biographical drama film directed by Tim Burton. "
     "The film was written by Scott Alexander and Larry Karaszewski. It stars Amy Adams as Margaret Keane."},
    {"title": "Tim Burton", "text": "Timothy Walter Burton (born August 25, 1958) is an American filmmaker. "
     "Tim Burton was born in Burbank, California."},
    {"title": "Burbank, California", "text": "Burbank is a city in Los Angeles County in Southern California. "
     "Burbank is home to many media and entertainment companies."},
    {"title": "Johnny Depp", "text": "John Christopher Depp II (born June 9, 1963) is an American actor. "
     "Johnny Depp was born in Owensboro, Kentucky."},
    {"title": "Edward Scissorhands", "text": "Edward Scissorhands is a 1990 American fantasy film directed by Tim "
     "Burton. The film stars Johnny Depp as Edward."},
    {"title": "Owensboro, Kentucky", "text": "Owensboro is a city in Daviess County, Kentucky. Owensboro is located "
     "on the Ohio River."},
]  # fmt: skip


def stage_context(memory: Memory, **kwargs) -> StageContext:
    return StageContext(memory.graph, memory.vectors, memory.embedder, **kwargs)


def strategy(memory: Memory, **recipe) -> DiffusionStrategy:
    context = AskContext(memory.graph, memory.vectors, memory.embedder, OfflineReranker())
    return DiffusionStrategy(context, DiffusionStrategy.recipe_type(**recipe))


def graph_rows(memory: Memory, cypher: str, **params) -> list[dict]:
    """Test-side inspection of the graph (the product's own queries live in cypher/)."""
    records, _, _ = memory.driver.execute_query(cypher, {"namespace": memory.namespace, **params})
    return [r.data() for r in records]


@pytest.fixture(scope="module")
def films(tmp_path_factory, neo4j_server, settings, driver):
    """Six short film/people/place passages, ingested offline and indexed by the gists stage."""
    cfg = private_settings(tmp_path_factory.mktemp("diffusion-home"), neo4j_server, settings, stages=[])
    mem = Memory(namespace=f"dif{uuid.uuid4().hex[:12]}", settings=cfg)
    mem.ingest(CORPUS)
    report = GistStage(stage_context(mem)).index_namespace()
    yield mem, report
    mem.close()


@pytest.fixture
def memory(isolated_settings, namespace: str):
    """A fresh memory whose ingest runs no memory stage: these tests run the gists stage themselves."""
    mem = Memory(namespace=namespace, settings=isolated_settings.model_copy(update={"stages": []}))
    yield mem
    mem.close()


# --------------------------------------------------------------------------- the stage


def test_stage_writes_a_gist_per_chunk_and_fact_vectors_but_no_gist_vectors(films) -> None:
    memory, report = films
    chunks = graph_rows(
        memory, "MATCH (c:Chunk {namespace: $namespace}) RETURN c.id AS id, c.doc_id AS doc_id"
    )
    gists = graph_rows(
        memory,
        "MATCH (c:Chunk {namespace: $namespace})-[:HAS_GIST]->(g:Gist {namespace: $namespace}) "
        "RETURN c.id AS chunk, g.id AS id, g.text AS text, g.doc_id AS doc_id",
    )
    assert len(chunks) == len(CORPUS) and sorted(g["chunk"] for g in gists) == sorted(c["id"] for c in chunks)
    assert all(g["text"].strip() for g in gists)
    assert report.failures == [] and report.written["gists"] == len(chunks)
    # every gist mention points at an entity its own chunk mentions
    stray = graph_rows(
        memory,
        "MATCH (c:Chunk {namespace: $namespace})-[:HAS_GIST]->(g:Gist)-[:MENTIONS]->(e:Entity) "
        "WHERE NOT (c)-[:MENTIONS]->(e) RETURN g.id AS gist, e.id AS entity",
    )
    assert stray == []
    mentions = graph_rows(
        memory, "MATCH (g:Gist {namespace: $namespace})-[m:MENTIONS]->(e:Entity) RETURN count(m) AS n"
    )
    assert mentions[0]["n"] == report.written["gist_mentions"] > 0
    # one fact vector per verb phrase with entities; gists are reached through their passages, not embedded
    verb_phrases = graph_rows(
        memory,
        "MATCH (v:VerbPhrase {namespace: $namespace}) WHERE EXISTS { (:Entity)-[:ROLE_IN]->(v) } RETURN v.id AS id",
    )
    assert (
        memory.vectors.count(FACT_COLLECTION, memory.namespace)
        == len(verb_phrases)
        == report.written["facts"]
    )
    assert memory.vectors.count(GIST_COLLECTION, memory.namespace) == 0
    hit = memory.vectors.search(
        FACT_COLLECTION, memory.namespace, memory.embedder.embed_query("Who directed Big Eyes?"), 1
    )[0]
    assert (
        hit.key.startswith("fact:")
        and "Tim Burton" in hit.payload["text"]
        and "Big Eyes" in hit.payload["text"]
    )
    entity_ids = {
        r["id"] for r in graph_rows(memory, "MATCH (e:Entity {namespace: $namespace}) RETURN e.id AS id")
    }
    assert set(hit.payload["entity_ids"]) <= entity_ids and hit.payload["chunk_id"] in {
        c["id"] for c in chunks
    }
    assert GistStage(stage_context(memory)).missing() == 0  # every chunk carries the stage's marker


def test_offline_gist_verbalises_facts_with_subject_from_the_qa_pairs() -> None:
    names = {
        "j": "Journal of Small Business Management",
        "w": "Wiley-Blackwell",
        "y": "1963",
        "g": "George T. Solomon",
    }
    mentions = tuple(Mention(k, v, "THING", v, ()) for k, v in names.items())
    gsw = ChunkGSW("c1", "d1", mentions, (
        VerbPhraseGSW("c1/v1", "is published by", ("j", "w"), (
            QARef("What is published by Wiley-Blackwell?", ("w",), "j"),
            QARef("Who published Journal of Small Business Management?", ("j",), "w"))),
        VerbPhraseGSW("c1/v2", "was published", ("j", "y"), (
            QARef("When was Journal of Small Business Management published?", ("j",), "y"),)),
        VerbPhraseGSW("c1/v10", "is the editor of", ("g", "j"), (
            QARef("Who is the editor of Journal of Small Business Management?", ("j",), "g"),)),
    ))  # fmt: skip
    facts = chunk_facts(gsw)
    assert [f.text for f in facts] == [
        "Journal of Small Business Management is published by Wiley-Blackwell.",
        "Journal of Small Business Management was published in 1963.",
        "George T. Solomon is the editor of Journal of Small Business Management.",
    ]
    assert facts[2].subject_ids == ("g",) and facts[2].object_ids == ("j",)
    # "Who was born in X?" asks for the subject even though it names X first; "What is X?" does not
    people = {"b": "Thomas Bevan", "c": "c.1796", "r": "river", "h": "Humaya River"}
    people_mentions = tuple(Mention(k, v, "THING", v, ()) for k, v in people.items())
    born = ChunkGSW("c3", "d2", people_mentions, (
        VerbPhraseGSW("c3/v1", "was born", ("b", "c"), (
            QARef("Who was born in c.1796?", ("c",), "b"), QARef("When was Thomas Bevan born?", ("b",), "c"))),
        VerbPhraseGSW("c3/v2", "is", ("h", "r"), (QARef("What is Humaya River?", ("h",), "r"),)),
    ))  # fmt: skip
    assert [f.text for f in chunk_facts(born)] == [
        "Thomas Bevan was born in c.1796.",
        "Humaya River is river.",
    ]
    chunk = StageChunk("c1", "d1", "JSBM", "The journal was first published in 1963.", 0)
    gist = offline_gist(chunk, gsw, facts)
    assert gist.text.startswith("Journal of Small Business Management is published by Wiley-Blackwell.")
    assert set(gist.entity_ids) == {"j", "w", "y", "g"}
    # no verb phrases: the passage's first sentences, never an empty gist
    bare = ChunkGSW("c2", "d1", mentions[:1], ())
    lead = offline_gist(StageChunk("c2", "d1", "T", "First one here. Second one. Third one.", 1), bare, [])
    assert lead.text == "First one here. Second one." and lead.method == "offline-lead"


@pytest.mark.parametrize(
    ("haystack", "needle", "found"),
    [
        ("Who is the editor of X-Men?", "x", True),  # a hyphen is no word character
        ("Who founded Foo_Bar Ltd?", "foo", False),  # an underscore is one
        ("Where is Öland?", "öland", True),
        ("What are Ölands?", "Öland", False),
        ("Which city is İstanbul in?", "İstanbul", True),  # lowercases to a longer string
        ("aa a", "a", True),  # the second occurrence is whole
        ("born in 1²", "1", False),  # a superscript digit is a word character
        ("anything", "", False),
    ],
)
def test_whole_word_containment_is_the_regex_relation(haystack: str, needle: str, found: bool) -> None:
    """The gists' word test, a string search, answers as ``(?<!\\w)needle(?!\\w)`` on lowercased text."""
    regex = (
        bool(needle) and re.search(rf"(?<!\w){re.escape(needle.lower())}(?!\w)", haystack.lower()) is not None
    )
    assert _contains(haystack, needle) is found is regex


def test_gist_and_facts_do_not_depend_on_the_order_neo4j_returns_the_chunk_gsw_in() -> None:
    """``gists/chunk_gsw`` lists mentions, participants and QA pairs in traversal order, which
    differed between two builds of one corpus ("have played in 2013, 2010" in one, "2010, 2013" in
    the other); the stage orders them itself, so every order gives the same gist and facts."""
    import itertools

    mentions = [
        {"id": "e9", "name": "Tampa Bay Rays", "type": "ORG", "surface": "Rays", "aliases": ["Devil Rays"]},
        {"id": "e2", "name": "2013", "type": "DATE", "surface": "2013", "aliases": []},
        {"id": "e5", "name": "2010", "type": "DATE", "surface": "2010", "aliases": []},
        {
            "id": "e7",
            "name": "Stuart Sternberg",
            "type": "PERSON",
            "surface": "Sternberg",
            "aliases": ["Stu"],
        },
    ]
    played = [
        {
            "id": "c/q10",
            "question": "When have Tampa Bay Rays played?",
            "question_entity_ids": ["e9"],
            "answer_id": "e2",
        },
        {
            "id": "c/q10",
            "question": "When have Tampa Bay Rays played?",
            "question_entity_ids": ["e9"],
            "answer_id": "e5",
        },
        {
            "id": "c/q2",
            "question": "Who have played in 2010?",
            "question_entity_ids": ["e5"],
            "answer_id": "e9",
        },
    ]
    owns = [
        {
            "id": "c/q3",
            "question": "Who owns Tampa Bay Rays?",
            "question_entity_ids": ["e9"],
            "answer_id": "e7",
        }
    ]

    def gist_of(m: list[dict], qas: list[dict], entity_ids: list[str]) -> tuple[str, tuple[str, ...]]:
        row = {"chunk_id": "c", "doc_id": "d", "mentions": m, "verb_phrases": [
            {"id": "c/v1", "text": "have played in", "entity_ids": entity_ids, "qas": qas},
            {"id": "c/v2", "text": "owns", "entity_ids": ["e9", "e7"], "qas": owns}]}  # fmt: skip
        gsw = read_gsw([row])["c"]
        facts = chunk_facts(gsw)
        return offline_gist(StageChunk("c", "d", "Rays", "x", 0), gsw, facts).text, tuple(
            f.text for f in facts
        )

    seen = {gist_of(list(m), list(q), list(e)) for m, q, e in itertools.product(
        itertools.permutations(mentions), itertools.permutations(played), itertools.permutations(["e2", "e5", "e9"]))}  # fmt: skip
    assert len(seen) == 1
    text, facts = seen.pop()
    assert "Tampa Bay Rays have played in 2010, 2013." in facts and text.startswith(facts[0])


@pytest.mark.parametrize(
    "reply, problem",
    [("not json at all", "JSON"), ('{"summary": "x"}', "exactly the key"), ('{"gist": "  "}', "non-empty"),
     ('["a"]', "JSON object"), ('{"gist": "x", "notes": "y"}', "exactly the key")],
)  # fmt: skip
def test_gist_replies_are_parsed_strictly(reply: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_gist_reply(reply, "A short passage.")
    assert (
        parse_gist_reply('{"gist": "Tim Burton  directed Big Eyes."}', "x") == "Tim Burton directed Big Eyes."
    )


def test_llm_gists_are_cached_and_failures_recorded_per_chunk(memory: Memory, tmp_path) -> None:
    memory.ingest(CORPUS[:2])
    cache = ExtractionCache(tmp_path / "gists.sqlite")
    good = json.dumps({"gist": "Tim Burton directed Big Eyes. Big Eyes stars Amy Adams."})
    # the first chunk asked gets a good gist; the second two unusable replies; then the model has no more
    # replies, so the stage's retry of the failed chunk within the same run fails as a call error
    replies = iter([AIMessage(good), AIMessage("sorry, no JSON"), AIMessage('{"gist": ""}')])
    model = GenericFakeChatModel(messages=replies)
    stage = GistStage(
        stage_context(memory, chat_model=model, options={"gist_cache": cache, "llm_concurrency": 1})
    )
    report = stage.index_namespace()
    assert len({chunk for chunk, _ in report.failures}) == 1
    assert "after 2 attempts" in report.failures[0][1] and "non-empty" in report.failures[0][1]
    failed_chunk = report.failures[0][0]
    rows = graph_rows(memory, "MATCH (g:Gist {namespace: $namespace}) RETURN g.chunk_id AS chunk, g.text AS text, "
                              "g.method AS method")  # fmt: skip
    by_chunk = {r["chunk"]: r for r in rows}
    assert len(by_chunk) == 2
    assert "LLM gist failed" in by_chunk[failed_chunk]["method"] and by_chunk[failed_chunk]["text"]
    ok_chunk = next(c for c in by_chunk if c != failed_chunk)
    assert by_chunk[ok_chunk]["text"] == json.loads(good)["gist"] and by_chunk[ok_chunk]["method"].startswith(
        "llm:"
    )
    assert stage.missing() == 1  # the failed chunk stays unmarked, to be asked again
    assert cache.count(memory.namespace) == 1
    # a second run only retries the failed chunk; the good gist comes from the cache, never the model
    retry = GistStage(stage_context(memory, chat_model=FakeListChatModel(responses=[good]),
                                    options={"gist_cache": cache}))  # fmt: skip
    second = retry.index_namespace()
    assert second.chunks == 1 and second.failures == [] and retry.missing() == 0


# --------------------------------------------------------------------------- the strategy


def test_ask_returns_passages_paired_with_gists_and_resolving_citations(films) -> None:
    memory, _ = films
    result = strategy(memory).ask("Where was the director of Big Eyes born?")
    passages = [e for e in result.evidence if e.kind == "passage"]
    assert len(passages) == 5 and result.strategy == "diffusion"
    for i, e in enumerate(result.evidence):
        if e.kind == "gist":  # each gist directly follows its passage and points back at it
            assert (
                result.evidence[i - 1].kind == "passage"
                and e.metadata["passage_id"] == result.evidence[i - 1].id
            )
    titles = [e.metadata["title"] for e in passages]
    assert {"Big Eyes", "Tim Burton"} <= set(titles[:3])
    stored = {
        r["chunk_id"]: r for r in memory.graph.read("traversals/chunks_by_id", ids=[e.id for e in passages])
    }
    assert set(stored) == {e.id for e in passages}
    cited = {c.chunk_id: c for c in result.citations}
    for e in passages:
        assert (
            cited[e.id].doc_id == stored[e.id]["doc_id"] == e.doc_id
            and cited[e.id].title == e.metadata["title"]
        )
    details = result.details
    assert details.facts and details.entities and len(details.passages) == 5
    for p in details.passages:  # both CogniRank components are reported and add up
        assert p["score"] == pytest.approx(0.95 * p["diffusion_norm"] + 0.05 * p["dense_norm"], abs=1e-9)
    assert all(w["converged"] for w in details.walks)
    offline = details.offline_answer
    assert 0.0 <= offline["threshold"] <= 1.0
    assert result.answer == (offline["answer"] if offline["score"] >= offline["threshold"] else NA)
    console = Console(record=True, width=200)
    render_result(console, result, trace=True)
    shown = console.export_text()
    assert "fact" in shown and "entity" in shown and "ε·" in shown


def test_offline_answer_is_the_best_qa_pair_of_the_top_passages(films) -> None:
    memory, _ = films
    result = strategy(memory).ask("Who directed Big Eyes?")
    assert result.answer == "Tim Burton"
    assert result.details.offline_answer["chunk_id"] in {e.id for e in result.evidence if e.kind == "passage"}


def test_without_gists_the_same_passages_come_alone(films) -> None:
    memory, _ = films
    paired = strategy(memory).ask("Where was the director of Big Eyes born?")
    alone = strategy(memory, gists=False).ask("Where was the director of Big Eyes born?")
    assert {e.kind for e in alone.evidence} == {"passage"}
    assert [e.id for e in alone.evidence] == [e.id for e in paired.evidence if e.kind == "passage"]
    assert alone.evidence_tokens < paired.evidence_tokens


def test_with_a_budget_the_gists_follow_every_passage(films) -> None:
    memory, _ = films
    result = strategy(memory, budget=2000).ask("Where was the director of Big Eyes born?")
    kinds = [e.kind for e in result.evidence]
    assert "gist" in kinds and "passage" in kinds and set(kinds) == {"passage", "gist"}
    last_passage = max(i for i, k in enumerate(kinds) if k == "passage")
    assert last_passage < kinds.index("gist"), kinds  # a gist never displaces a passage
    assert result.evidence_tokens <= 2000


@pytest.mark.parametrize(
    "question",
    [
        "Where was the director of Big Eyes born?",
        "Which film came out first, Big Eyes or Edward Scissorhands?",
    ],
)
def test_the_budget_passage_tier_is_what_dense_search_finds(films, question) -> None:
    """The tier comes from the snapshot's passage vectors, not a vector search: same passages, same
    order, same cosines; and the surest of them leads a small budget's passages."""
    memory, _ = films
    vector = np.asarray(memory.embedder.embed_query(question), dtype=np.float32)
    snapshot, _ = snapshot_cache(memory.graph, memory.vectors).current(
        memory.graph, memory.vectors, memory.embedder.dim
    )
    tier = dense_tier(snapshot, passage_similarity(snapshot.chunk_vectors, vector))
    hits = memory.vectors.search(CHUNK_COLLECTION, memory.namespace, vector, PASSAGE_POOL)
    assert [c for c, _ in tier] == [h.key for h in hits]
    assert [c[1] for c in tier] == pytest.approx([h.score for h in hits], abs=1e-4)
    result = strategy(memory, budget=64).ask(question)
    assert next(e.id for e in result.evidence if e.kind == "passage") == hits[0].key
    assert result.evidence_tokens <= 64


def test_a_small_budget_fills_with_the_best_facts_where_a_passage_would_be_cut(films) -> None:
    """Where the whole passages end, the facts that matched the question best fill the room rather
    than a passage cut to a fragment; each is a fact the gists stage stored, cited to its passage."""
    memory, _ = films
    question = "Where was the director of Big Eyes born?"
    with_facts = strategy(memory, budget=64).ask(question)
    without = strategy(memory, budget=64, facts=0).ask(question)
    assert not any(e.kind == "fact" for e in without.evidence)
    assert any(e.metadata.get("shortened") for e in without.evidence)  # plain packing cuts a passage here
    facts = [e for e in with_facts.evidence if e.kind == "fact"]
    assert facts and with_facts.evidence_tokens <= 64
    # here the second hop's answer comes in a fact, where plain packing gave another passage's fragment
    assert "Burbank" in " ".join(e.text for e in facts)
    assert "Burbank" not in " ".join(e.text for e in without.evidence)
    # the passages packed whole before the cut stay, in their order, ahead of the facts
    whole = [e.id for e in without.evidence if not e.metadata.get("shortened")]
    first_fact = next(i for i, e in enumerate(with_facts.evidence) if e.kind == "fact")
    assert [e.id for e in with_facts.evidence[:first_fact]] == whole[:first_fact]
    stored = {h.key: h.payload for h in memory.vectors.search(
        FACT_COLLECTION, memory.namespace, memory.embedder.embed_query(question), 5)}  # fmt: skip
    cited = {c.evidence_id: c for c in with_facts.citations}
    for fact in facts:
        assert fact.id in stored and fact.text == stored[fact.id]["text"]
        assert fact.chunk_ids == (stored[fact.id]["chunk_id"],)
        assert cited[fact.id].doc_id == stored[fact.id]["doc_id"]


def test_comparison_question_is_split_and_selected_two_plus_two_plus_one(films) -> None:
    memory, _ = films
    result = strategy(memory).ask("Which film came out first, Big Eyes or Edward Scissorhands?")
    assert len(result.decomposition) == 2 and result.decomposed_by == "offline"
    details = result.details
    assert len(details.sub_questions) == 2 and len(details.walks) == 2
    passages = [e for e in result.evidence if e.kind == "passage"]
    first_two = {e.metadata["title"] for e in passages[:2]}
    next_two = {e.metadata["title"] for e in passages[2:4]}
    assert "Big Eyes" in first_two and "Edward Scissorhands" in next_two
    no_split = strategy(memory, split=False).ask(
        "Which film came out first, Big Eyes or Edward Scissorhands?"
    )
    assert no_split.decomposition == [] and len(no_split.details.walks) == 1


def test_llm_answers_from_passages_and_gists(films) -> None:
    memory, _ = films
    model = FakeListChatModel(responses=['{"sequences": [["Who directed Big Eyes?"]]}', "Tim Burton"])
    context = AskContext(memory.graph, memory.vectors, memory.embedder, OfflineReranker(), chat_model=model)
    result = DiffusionStrategy(context).ask("Who directed Big Eyes?")
    assert result.answer == "Tim Burton" and result.answered_by == "llm"
    assert {e.kind for e in result.evidence} == {"passage", "gist"}


def test_deleting_a_document_removes_its_gists_facts_vectors_and_walk_nodes(memory: Memory) -> None:
    memory.ingest(CORPUS[:4])
    stage = GistStage(stage_context(memory))
    stage.index_namespace()
    ask = strategy(memory)
    before = ask.ask("Where was Johnny Depp born?")
    assert before.details.snapshot["rebuilt"]
    doc = graph_rows(
        memory, "MATCH (d:Document {namespace: $namespace, title: 'Johnny Depp'}) RETURN d.id AS id"
    )[0]["id"]
    chunk_ids = [r["id"] for r in memory.graph.read("stages/document_chunk_ids", doc_id=doc)]
    only_depp = graph_rows(
        memory,
        "MATCH (c:Chunk {namespace: $namespace})-[:MENTIONS]->(e:Entity) WITH e, collect(c.doc_id) AS docs "
        "WHERE docs = [$doc] RETURN e.id AS id", doc=doc,
    )  # fmt: skip
    assert only_depp and memory.vectors.count(FACT_COLLECTION, memory.namespace, where={"doc_id": doc}) > 0
    snapshot, _ = snapshot_cache(memory.graph, memory.vectors).current(
        memory.graph, memory.vectors, memory.embedder.dim
    )
    assert set(chunk_ids) <= set(snapshot.chunk_ids) and {r["id"] for r in only_depp} <= set(
        snapshot.entity_ids
    )

    stage.delete_document(doc, chunk_ids)
    memory.delete(doc)

    assert (
        graph_rows(memory, "MATCH (g:Gist {namespace: $namespace}) WHERE g.doc_id = $doc RETURN g", doc=doc)
        == []
    )
    assert len(graph_rows(memory, "MATCH (g:Gist {namespace: $namespace}) RETURN g.id AS id")) == 3
    for collection in (FACT_COLLECTION, GIST_COLLECTION, CHUNK_COLLECTION):
        assert memory.vectors.count(collection, memory.namespace, where={"doc_id": doc}) == 0
    after = ask.ask("Where was Johnny Depp born?")
    assert after.details.snapshot["rebuilt"]  # the walk graph noticed the delete
    snapshot, rebuilt = snapshot_cache(memory.graph, memory.vectors).current(
        memory.graph, memory.vectors, memory.embedder.dim
    )
    assert not rebuilt  # and is reused while memory stays unchanged
    assert not set(chunk_ids) & set(snapshot.chunk_ids)
    assert not {r["id"] for r in only_depp} & set(snapshot.entity_ids)
    assert doc not in {e.doc_id for e in after.evidence}
    assert not [
        f for f in after.details.facts if any(f["fact_id"].startswith(f"fact:{c}/") for c in chunk_ids)
    ]

    memory.ingest(CORPUS[3:4])  # ingest is noticed too
    again = ask.ask("Where was Johnny Depp born?")
    assert again.details.snapshot["rebuilt"] and again.details.snapshot["chunks"] == 4


def test_a_fact_vector_is_the_mean_of_its_qa_vectors_and_no_fact_text_is_embedded(memory: Memory) -> None:
    """The ingest has just embedded every QA question; a fact restates its verb phrase's QA pairs,
    so its vector is their normalised mean, and the stage runs nothing through the model. A fact
    whose QA vectors are gone is embedded from its text."""
    memory.ingest(CORPUS[:3])
    embedded = memory.embedder.texts_embedded
    report = GistStage(stage_context(memory)).index_namespace()
    assert report.written["facts"] > 0 and memory.embedder.texts_embedded == embedded

    rows = graph_rows(
        memory,
        "MATCH (v:VerbPhrase {namespace: $namespace})-[q:QA]->() RETURN v.id AS vp, collect(DISTINCT q.id) AS qas",
    )
    qas_of = {r["vp"]: r["qas"] for r in rows}
    facts = memory.vectors.get_vectors(FACT_COLLECTION, memory.namespace, [f"fact:{vp}" for vp in qas_of])
    assert len(facts) == report.written["facts"]
    for key, vector in facts.items():
        qa_vectors = memory.vectors.get_vectors(
            QA_COLLECTION, memory.namespace, qas_of[key.removeprefix("fact:")]
        )
        mean = np.mean(list(qa_vectors.values()), axis=0)
        assert np.allclose(vector, mean / np.linalg.norm(mean), atol=1e-4)

    chunks = [StageChunk.from_row(r) for r in graph_rows(
        memory, "MATCH (c:Chunk {namespace: $namespace}) RETURN c.id AS id, c.doc_id AS doc_id, "
        "coalesce(c.title, '') AS title, c.text AS text, c.position AS position ORDER BY id")]  # fmt: skip
    memory.vectors.delete(QA_COLLECTION, memory.namespace, where={"chunk_id": [c.id for c in chunks]})
    GistStage(stage_context(memory)).run(chunks)
    texts = {h.key: h.payload["text"] for h in memory.vectors.search(
        FACT_COLLECTION, memory.namespace, memory.embedder.embed_query("Tim Burton"), 50)}  # fmt: skip
    again = memory.vectors.get_vectors(FACT_COLLECTION, memory.namespace, list(texts))
    assert texts and memory.embedder.texts_embedded > embedded
    for key, text in texts.items():
        assert np.allclose(again[key], memory.embedder.embed_documents([text])[0], atol=1e-4)


def test_reindexing_a_chunk_drops_the_gist_vector_an_older_store_wrote_for_it(memory: Memory) -> None:
    """Stores written before gists went unembedded hold a gist vector per chunk; nothing reads it, and
    a chunk indexed again (its GSW may have changed) must not keep a vector of its old gist."""
    from engramdb.platform.vectors import VectorPoint

    memory.ingest(CORPUS[:2])
    chunks = [StageChunk.from_row(r) for r in graph_rows(
        memory, "MATCH (c:Chunk {namespace: $namespace}) RETURN c.id AS id, c.doc_id AS doc_id, "
        "coalesce(c.title, '') AS title, c.text AS text, c.position AS position ORDER BY id")]  # fmt: skip
    legacy = [VectorPoint(f"gist:{c.id}", memory.embedder.embed_query(f"an old gist of {c.title}"),
                          {"doc_id": c.doc_id, "chunk_id": c.id}) for c in chunks]  # fmt: skip
    stage = GistStage(stage_context(memory))  # which makes sure the old collection is there
    memory.vectors.upsert(GIST_COLLECTION, memory.namespace, legacy)
    assert memory.vectors.count(GIST_COLLECTION, memory.namespace) == len(chunks) == 2

    stage.run(chunks[:1])

    def legacy_left(chunk: StageChunk) -> int:
        return memory.vectors.count(GIST_COLLECTION, memory.namespace, where={"chunk_id": chunk.id})

    assert legacy_left(chunks[0]) == 0 and legacy_left(chunks[1]) == 1


def test_calibration_never_draws_a_passage_without_a_vector(memory: Memory) -> None:
    """A passage whose vector is not (yet) stored, as an unfinished ingest leaves it, has an all-zero
    row in the walk snapshot; the offline N/A calibration used to draw it as a probe and fail on a
    zero query vector."""
    from engramdb.retrieval.diffusion.strategy import calibrate_na_threshold

    memory.ingest(CORPUS)
    GistStage(stage_context(memory)).index_namespace()
    chunks = graph_rows(memory, "MATCH (c:Chunk {namespace: $namespace}) RETURN c.id AS id ORDER BY id")
    missing = [r["id"] for r in chunks[:3]]
    memory.vectors.delete(CHUNK_COLLECTION, memory.namespace, keys=missing)
    ask = strategy(memory)
    context = ask.context
    snapshot, _ = snapshot_cache(memory.graph, memory.vectors).current(
        memory.graph, memory.vectors, memory.embedder.dim
    )
    rows = [snapshot.chunk_ids.index(chunk_id) for chunk_id in missing]
    assert not snapshot.chunk_vectors[rows].any()  # the three passages have all-zero rows
    threshold = calibrate_na_threshold(context, snapshot, probes=40, passages=2, false_accept=0.2)
    assert 0.0 < threshold <= 1.0
    result = ask.ask("Who directed Big Eyes?")  # calibrates on this snapshot, then answers
    assert result.evidence and result.details.snapshot["chunks"] == len(chunks)


def test_a_documents_gists_are_found_by_index_seeks_not_a_scan_of_the_namespace(films) -> None:
    """The delete reads the document's gists only, whatever the namespace holds: every Gist lookup
    in the plans is an index seek (by id, and by namespace and document)."""
    memory, _ = films
    params = {"namespace": memory.namespace, "doc_id": "any", "gist_ids": ["gist:any#0"], "limit": 128}
    for name, seek in (
        ("gists/delete_gists", "NodeUniqueIndexSeek"),
        ("gists/delete_document_gists", "NodeIndexSeek"),
    ):
        records = memory.driver.execute_query("EXPLAIN " + query(name), params)
        operators: list[str] = []
        stack = [records.summary.plan]
        while stack:
            step = stack.pop()
            operators.append(step["operatorType"].split("@")[0].removesuffix("(Locking)"))
            stack.extend(step.get("children", []))
        assert seek in operators, (name, operators)
        assert not {"NodeByLabelScan", "NodeIndexScan", "AllNodesScan"} & set(operators), (name, operators)


def test_ingest_runs_the_stage_and_delete_cascades_through_it(isolated_settings, namespace: str) -> None:
    """The same cascade through Memory.ingest / Memory.delete, with the gists stage configured."""
    with Memory(
        namespace=namespace, settings=isolated_settings.model_copy(update={"stages": ["gists"]})
    ) as memory:
        memory.ingest(CORPUS[:2])
        gists = graph_rows(memory, "MATCH (g:Gist {namespace: $namespace}) RETURN g.doc_id AS doc")
        assert len(gists) == 2 and memory.vectors.count(FACT_COLLECTION, memory.namespace) > 0
        doc = gists[0]["doc"]
        memory.delete(doc)
        assert [
            g["doc"]
            for g in graph_rows(memory, "MATCH (g:Gist {namespace: $namespace}) RETURN g.doc_id AS doc")
        ] == [gists[1]["doc"]]
        for collection in (FACT_COLLECTION, GIST_COLLECTION):
            assert memory.vectors.count(collection, memory.namespace, where={"doc_id": doc}) == 0

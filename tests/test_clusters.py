"""The ``clusters`` stage against the real Neo4j and vector store, on real MuSiQue paragraphs.

One small memory serves the whole module: the paragraphs of a few MuSiQue
questions (supporting and distracting ones, so related passages really are
related), ingested once, in two batches, with the stage on; what that ingest
built is recorded for the test about it. Every other test clears the hierarchy
and grows it its own way from the stored chunks (growing needs no re-ingest),
so the module pays for one ingest of sixty passages. The delete test takes a
document out and ingests it again; the restart test closes the memory, lets
another process continue the hierarchy and opens the memory again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from engramdb.ingestion.documents import make_document
from engramdb.ingestion.stages.base import StageChunk, StageContext
from engramdb.ingestion.stages.clusters import (
    CLUSTER_COLLECTION,
    ClusterStage,
    health_problems,
    lead_sentence,
)
from engramdb.platform.config import Settings
from engramdb.platform.errors import InputError
from engramdb.platform.interfaces.memory import Memory
from engramdb.platform.storage import CHUNK_COLLECTION
from engramdb.retrieval.evidence import dense_passage_rows

QUESTION_COUNT = 3
#: A denser chunk network than the default (cosine >= 0.14 across documents instead of 0.43, still at most
#: k links per chunk), so sixty passages form regions where label propagation splits communities whose
#: crossing edges link them one level up.
DENSE = {"theta": 0.1}


@pytest.fixture(scope="module")
def corpus(musique_questions: list[dict]) -> list[dict]:
    seen: dict[str, dict] = {}
    for q in musique_questions[:QUESTION_COUNT]:
        for p in q["paragraphs"]:
            seen.setdefault(
                p["title"] + p["paragraph_text"], {"title": p["title"], "text": p["paragraph_text"]}
            )
    return list(seen.values())


@dataclass
class Shared:
    """The module's memory, which a test may close and open again (as a restarted process would)."""

    settings: Settings
    namespace: str
    memory: Memory
    after_ingest: list[dict] = field(default_factory=list)  # per ingest batch: health, clusters, report

    def reopen(self) -> Memory:
        self.memory = Memory(namespace=self.namespace, settings=self.settings)
        return self.memory


@pytest.fixture(scope="module")
def shared(tmp_path_factory, neo4j_server, settings, driver, corpus: list[dict]):
    from pydantic import SecretStr

    cfg = settings.model_copy(update={"home": tmp_path_factory.mktemp("clusters-home"), "neo4j_uri": neo4j_server.bolt_uri,
                                      "neo4j_password": SecretStr(neo4j_server.password()), "stages": ["clusters"]})  # fmt: skip
    namespace = f"cl{uuid.uuid4().hex[:12]}"
    box = Shared(cfg, namespace, Memory(namespace=namespace, settings=cfg))
    for part in (corpus[:40], corpus[40:]):  # the second batch grows what the first one built
        report = box.memory.ingest(part)
        stage = box.memory.ingestor.stages[0]
        box.after_ingest.append({"report": report, "health": stage.health(), "missing": stage.missing(),
                                 "clusters": clusters(stage)})  # fmt: skip
    yield box
    box.memory.close()


@pytest.fixture
def module_memory(shared: Shared) -> Memory:
    return shared.memory


def make_stage(memory: Memory, **options) -> ClusterStage:
    return ClusterStage(
        StageContext(memory.graph, memory.vectors, memory.embedder, options={"clusters": options})
    )


def clusters(stage: ClusterStage) -> dict[str, dict]:
    return {r["id"]: r for r in stage.context.graph.read("clusters/cluster_rows")}


def assert_healthy(stage: ClusterStage, chunks: int) -> dict[str, int]:
    health = stage.health()
    assert health["chunks"] == chunks
    assert not health_problems(health), health
    assert stage.context.vectors.count(CLUSTER_COLLECTION, stage.context.namespace) == health["clusters"]
    return health


def grow_in_batches(stage: ClusterStage, chunks: list[StageChunk], batches: int) -> list:
    reports = []
    for i in range(batches):
        reports.append(stage.run(chunks[i::batches]))
    return reports


# --------------------------------------------------------------------------- tests


def test_batches_give_a_valid_overlapping_hierarchy(module_memory: Memory) -> None:
    stage = make_stage(module_memory, **DENSE)
    stage.clear()
    chunks = stage.indexable_chunks()
    reports = grow_in_batches(stage, chunks, 3)
    health = assert_healthy(stage, len(chunks))
    assert health["overlapping_chunks"] > 0  # some chunk sits in two level-1 clusters
    levels = {row["level"]: row for row in stage.level_counts()}
    assert levels[1]["clusters"] < len(chunks)  # chunks were grouped, not just wrapped one by one
    assert max(levels) >= 2  # and the groups were grouped again
    assert all(r.written["links"] > 0 and r.written["summaries"] > 0 for r in reports)
    for row in clusters(stage).values():
        assert row["summary"].strip() and row["members"]


def test_a_batch_resummarises_only_the_clusters_it_changed(module_memory: Memory) -> None:
    stage = make_stage(module_memory, **DENSE)
    stage.clear()
    chunks = stage.indexable_chunks()
    stage.run(chunks[:-6])
    before = clusters(stage)
    report = stage.run(chunks[-6:])
    after = clusters(stage)
    revised = {
        cid for cid, row in after.items() if cid not in before or row["revision"] != before[cid]["revision"]
    }
    regrouped = {
        cid
        for cid, row in after.items()
        if cid not in before or set(row["members"]) != set(before[cid]["members"])
    }
    print(f"6 new chunks: {len(revised)} of {len(after)} clusters re-summarised, {len(regrouped)} regrouped")
    assert report.written["summaries"] == len(revised) > 0
    assert len(regrouped) <= report.written["clusters_written"] >= len(revised)
    assert len(revised) < len(before) / 2  # a small batch touches a small part of the hierarchy
    for cid in set(after) - revised:  # every other summary is exactly as it was, even where a member joined
        assert after[cid]["summary"] == before[cid]["summary"]
    for cid in set(after) - revised - regrouped:
        assert sorted(after[cid]["members"]) == sorted(before[cid]["members"])
    new_ids = {c.id for c in chunks[-6:]}
    assert all(any(n in row["members"] for row in after.values()) for n in new_ids)
    assert_healthy(stage, len(chunks))
    # Taking the batch out again (the incremental delete path) leaves a healthy hierarchy without it.
    removal = stage.remove_chunks(sorted(new_ids))
    assert stage.missing() == len(new_ids) and removal.written["clusters_written"] < len(after)
    assert_healthy(stage, len(chunks) - len(new_ids))
    assert not any(new_ids & set(row["members"]) for row in clusters(stage).values())


def test_two_splits_of_the_same_corpus_give_hierarchies_of_similar_shape(module_memory: Memory) -> None:
    stage = make_stage(module_memory, **DENSE)
    shapes = {}
    for name, batches, order in (("2 batches", 2, 1), ("5 batches, reversed", 5, -1)):
        stage.clear()
        chunks = stage.indexable_chunks()[::order]
        grow_in_batches(stage, chunks, batches)
        assert_healthy(stage, len(chunks))
        shapes[name] = {row["level"]: row["clusters"] for row in stage.level_counts()}
    print("clusters per level:", shapes)
    one, two = shapes.values()
    assert abs(len(one) - len(two)) <= 1, shapes
    for level in set(one) & set(two):  # each level about as big in both
        assert abs(one[level] - two[level]) <= max(2, 0.25 * max(one[level], two[level])), shapes


def test_ingest_grows_the_hierarchy_batch_by_batch(shared: Shared) -> None:
    first, second = shared.after_ingest
    for state in (first, second):
        assert state["missing"] == 0 and not health_problems(state["health"]), state["health"]
        assert state["report"].stage_seconds.get("stage_clusters", 0) > 0
    assert second["health"]["chunks"] > first["health"]["chunks"]
    print("clusters after each ingest batch:", len(first["clusters"]), len(second["clusters"]))
    kept = set(first["clusters"]) & set(second["clusters"])
    assert (
        len(kept) > len(first["clusters"]) / 2
    )  # the second batch grew the hierarchy, it did not rebuild it
    same = [cid for cid in kept if first["clusters"][cid]["revision"] == second["clusters"][cid]["revision"]]
    assert len(same) > len(first["clusters"]) / 2  # and most summaries were left as they were


def test_growth_continues_in_another_process_after_a_restart(shared: Shared) -> None:
    stage = make_stage(shared.memory)  # default settings, as the CLI's `index` uses them
    stage.clear()
    chunks = stage.indexable_chunks()
    stage.run(chunks[:-6])
    before = clusters(stage)
    shared.memory.close()  # the state the next batch needs is in Neo4j (and the vectors on disk)
    env = {**os.environ, "ENGRAMDB_HOME": str(shared.settings.home), "ENGRAMDB_NEO4J_URI": shared.settings.neo4j_uri,
           "ENGRAMDB_NEO4J_PASSWORD": shared.settings.neo4j_password.get_secret_value(), "ENGRAMDB_CONFIG": "none"}  # fmt: skip
    try:
        command = [
            sys.executable,
            "-m",
            "engramdb.platform.interfaces.cli",
            "-n",
            shared.namespace,
            "index",
            "clusters",
            "--json",
        ]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    finally:
        memory = shared.reopen()
    assert done.returncode == 0, done.stderr
    [report] = json.loads(done.stdout)
    assert report["stage"] == "clusters" and report["chunks"] == 6  # only the chunks it had not indexed
    stage = make_stage(memory)
    after = clusters(stage)
    assert_healthy(stage, len(chunks))
    assert len(set(before) & set(after)) > len(before) / 2  # clusters kept their ids while growing
    revised = {
        cid for cid, row in after.items() if cid not in before or row["revision"] != before[cid]["revision"]
    }
    assert 0 < report["written"]["summaries"] == len(revised) < len(after) / 2


def test_delete_leaves_no_dangling_member(shared: Shared, corpus: list[dict]) -> None:
    memory = shared.memory
    stage = memory.ingestor.stages[0]  # the stage the memory's delete goes through
    assert isinstance(stage, ClusterStage)
    stage.clear()
    built = stage.index_namespace()
    chunk_count = len(stage.indexable_chunks())
    before = clusters(stage)
    # At the default threshold some chunks link to nothing: a cluster of one chunk is that chunk (its lead
    # sentence and its vector), never embedded.
    singles = {cid: row["members"][0] for cid, row in before.items() if len(row["members"]) == 1}
    assert singles and built.written["summaries_embedded"] == built.written["summaries"] - len(singles)
    ns, vectors = stage.context.namespace, stage.context.vectors
    mine = vectors.get_vectors(CLUSTER_COLLECTION, ns, list(singles))
    theirs = vectors.get_vectors(CHUNK_COLLECTION, ns, list(singles.values()))
    assert all(np.allclose(mine[cid], theirs[chunk_id]) for cid, chunk_id in singles.items())
    assert vectors.count(CLUSTER_COLLECTION, ns, where={"kind": "S1"}) == len(singles)
    # The document whose first sentence opens the biggest cluster's summary: deleting it must rewrite it.
    victim = max((r for r in before.values() if r["level"] == 1), key=lambda r: len(r["members"]))
    doc_id = victim["sources"][0].rsplit("#", 1)[0]
    passage = next(p for p in corpus if make_document(p["text"], title=p["title"]).id == doc_id)
    chunk_ids = [r["id"] for r in memory.graph.read("stages/document_chunk_ids", doc_id=doc_id)]
    try:
        memory.delete(doc_id)  # the pipeline asks the stage to forget the document first
        report = stage.last_delete
        assert report is not None and 0 < report.written["summaries"] <= report.written["clusters_written"]
        assert report.written["clusters_written"] < len(before)
        assert_healthy(stage, chunk_count - len(chunk_ids))
        after = clusters(stage)
        assert all(c not in row["members"] + row["sources"] for row in after.values() for c in chunk_ids)
        untouched = [
            cid for cid, row in before.items() if not set(row["members"]) & set(chunk_ids) and cid in after
        ]
        assert untouched and all(after[cid]["revision"] == before[cid]["revision"] for cid in untouched[:5])
    finally:
        memory.ingest([passage])  # the module's memory is whole again (the stage adds it back)
    assert stage.missing() == 0
    assert_healthy(stage, chunk_count)


def test_llm_summaries_use_the_chat_model(module_memory: Memory) -> None:
    reply = "These passages are about Jacques Rivette's films and the actors who starred in them."
    model = FakeListChatModel(responses=[reply])
    stage = ClusterStage(StageContext(module_memory.graph, module_memory.vectors, module_memory.embedder,
                                      chat_model=model, options={"clusters": DENSE}))  # fmt: skip
    stage.clear()
    chunks = stage.indexable_chunks()[:12]
    report = stage.run(chunks)
    rows = clusters(stage).values()
    written = [r for r in rows if len(r["members"]) > 1]
    assert written and report.written["llm_summaries"] == report.written["summaries_embedded"] == len(written)
    assert {r["summary"] for r in written} == {reply}
    # A cluster of one chunk needs no model: it is summarised by its chunk's lead sentence.
    texts = {c.id: c.text for c in chunks}
    for row in rows:
        if len(row["members"]) == 1:
            assert row["summary"] == lead_sentence(texts[row["members"][0]]) != reply


def test_bad_settings_are_refused_with_their_name(module_memory: Memory) -> None:
    with pytest.raises(InputError, match="theta"):
        make_stage(module_memory, theta=2.0)
    with pytest.raises(InputError, match="unknown_knob"):
        make_stage(module_memory, unknown_knob=1)


# --------------------------------------------------------------------------- the cluster strategy


def test_prune_and_grow_returns_cited_evidence_and_a_trace(module_memory: Memory, corpus: list[dict]) -> None:
    from rich.console import Console

    from engramdb.retrieval.cluster.strategy import ClusterDetails, ClusterStrategy
    from engramdb.retrieval.render import render_result
    from engramdb.retrieval.rerankers import OfflineReranker
    from engramdb.retrieval.strategy import AskContext

    stage = make_stage(module_memory, **DENSE)
    stage.clear()
    stage.index_namespace()
    context = AskContext(
        module_memory.graph, module_memory.vectors, module_memory.embedder, OfflineReranker()
    )
    strategy = ClusterStrategy(context)
    title = corpus[0]["title"]
    result = strategy.ask(f"What is known about {title}?", trace=True)
    assert result.strategy == "cluster" and result.answer
    kinds = [e.kind for e in result.evidence]
    assert kinds[0] == "passage" and "cluster" in kinds and kinds.count("passage") == 5
    assert title in {e.metadata.get("title") for e in result.evidence}
    assert {c.evidence_id for c in result.citations} == {e.id for e in result.evidence}  # every item is cited
    titles = {p["title"] for p in corpus}
    assert all(c.title in titles for c in result.citations)
    details = result.details
    assert isinstance(details, ClusterDetails) and details.rounds[0].kept and details.active
    assert len(details.rounds) >= 2  # it grew at least once from the first selection
    assert 0.0 < details.na_threshold < 1.0
    console = Console(record=True, width=120)
    render_result(console, result, trace=True)
    shown = console.export_text()
    assert "round 0" in shown and "kept" in shown and "best QA pair" in shown
    absent = strategy.ask("Which spacecraft first landed on the moons of the planet Zorbulon?")
    assert absent.answer == "N/A"


def test_with_a_chat_model_the_model_prunes_and_answers(module_memory: Memory) -> None:
    from engramdb.retrieval.cluster.strategy import ClusterDetails, ClusterStrategy
    from engramdb.retrieval.rerankers import OfflineReranker
    from engramdb.retrieval.strategy import AskContext

    stage = make_stage(module_memory, **DENSE)
    if stage.missing():
        stage.index_namespace()
    # Round 0: the model keeps item 1; round 1: nothing more; then it answers from the evidence.
    model = FakeListChatModel(responses=["1", "0", "American Institute of Physics"])
    context = AskContext(module_memory.graph, module_memory.vectors, module_memory.embedder, OfflineReranker(),
                         chat_model=model)  # fmt: skip
    result = ClusterStrategy(context).ask("Who publishes the Journal of Mathematical Physics?")
    details = result.details
    assert isinstance(details, ClusterDetails)
    assert details.rounds[0].kept == [details.rounds[0].candidates[0][0]]
    assert [r.kept for r in details.rounds[1:]] == [[]]
    assert result.answer == "American Institute of Physics" and result.answered_by == "llm"
    assert result.evidence and result.citations


def test_a_run_cut_short_between_levels_is_finished_by_the_next_one(module_memory: Memory) -> None:
    from engramdb.ingestion.stages.base import StageReport

    stage = make_stage(module_memory, **DENSE)
    stage.clear()
    chunks = stage.indexable_chunks()
    # Level 0 only, then the markers: what a process that died after its first level leaves behind.
    report = StageReport(stage.name)
    with ThreadPoolExecutor(max_workers=1) as pool:  # the summaries' embedding pool grow() gives a level
        stage._grow_level(0, stage._chunk_links(chunks, report), set(), set(), report, pool)
    stage.context.graph.write("stages/mark_chunks", chunk_ids=[c.id for c in chunks], stage=stage.name,
                              marker=stage.marker)  # fmt: skip
    assert stage.missing() == 0 and stage.health()["leftovers"] > 0
    assert [row["level"] for row in stage.level_counts()] == [1]
    finished = stage.index_namespace()  # no chunk is missing: it only finishes the pending levels
    assert finished.chunks == 0 and finished.written["summaries"] > 0
    assert max(row["level"] for row in stage.level_counts()) >= 2
    assert_healthy(stage, len(chunks))


class FailingClusterVectors:
    """The memory's vector store, except that storing cluster vectors fails (as a crash there would)."""

    def __init__(self, inner) -> None:
        self.inner = inner

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    def upsert(self, collection: str, namespace: str, points) -> None:
        if collection == CLUSTER_COLLECTION:
            raise RuntimeError("vector store down")
        self.inner.upsert(collection, namespace, points)


def test_a_level_commits_only_after_its_summary_vectors_are_stored(module_memory: Memory) -> None:
    stage = make_stage(module_memory, **DENSE)
    stage.clear()
    chunks = stage.indexable_chunks()
    failing = ClusterStage(StageContext(module_memory.graph, FailingClusterVectors(module_memory.vectors),
                                        module_memory.embedder, options={"clusters": DENSE}))  # fmt: skip
    with pytest.raises(RuntimeError, match="vector store down"):
        failing.run(chunks)
    # The level's transaction rolled back: no cluster, no replica, no chunk link without its vectors.
    assert stage.level_counts() == [] and stage.health()["clusters"] == 0
    ids = [c.id for c in chunks]
    assert stage.context.graph.read("clusters/expand", chunk_ids=ids, cluster_ids=[]) == []
    assert stage.missing() == len(chunks)
    stage.run(chunks)
    assert_healthy(stage, len(chunks))


def test_a_hierarchy_built_by_another_stage_version_is_rebuilt_whole(module_memory: Memory) -> None:
    stage = make_stage(module_memory, **DENSE)
    stage.clear()
    chunks = stage.indexable_chunks()
    stage.run(chunks[: len(chunks) // 2])
    # Mark that half as indexed by an older version of the stage, as a memory built before an upgrade is.
    stage.context.graph.write("stages/mark_chunks", chunk_ids=[c.id for c in chunks[: len(chunks) // 2]],
                              stage=stage.name, marker=f"{stage.name}@0")  # fmt: skip
    assert stage.stale() == len(chunks) // 2
    report = stage.index_namespace()
    assert report.chunks == len(chunks)  # every chunk grown again, not only the half never indexed
    assert stage.stale() == 0 and stage.missing() == 0
    assert_healthy(stage, len(chunks))


def test_the_evidence_bar_comes_from_user_worded_questions_memory_cannot_answer(
    module_memory: Memory,
) -> None:
    """The offline N/A bar of every passage-answering strategy is read off absent probes worded as
    users word questions (reworded, two hops composed into one, about invented names), each over
    the passages dense search finds for it."""
    import numpy as np

    from engramdb.retrieval.evidence_answer import EvidenceAnswerer
    from engramdb.retrieval.na_calibration import MIN_PROBES, build_probes, namespace_seed
    from engramdb.retrieval.rerankers import OfflineReranker
    from engramdb.retrieval.strategy import AskContext

    context = AskContext(
        module_memory.graph, module_memory.vectors, module_memory.embedder, OfflineReranker()
    )
    answerer = EvidenceAnswerer(context)
    probes = build_probes(
        context.graph, context.embedder, answerer.na_sample, namespace_seed(context.namespace)
    )
    names = {p.sequence[0] for p in probes.reworded}
    assert all(p.sequence[0] not in names for p in probes.absent)  # the asked-about names are invented
    scores = answerer._absent_scores()
    assert len(scores) >= MIN_PROBES and all(0.0 <= s <= 1.0 for s in scores)
    assert answerer.na_threshold() == pytest.approx(float(np.quantile(scores, answerer.na_quantile)))


def test_with_a_budget_each_probe_is_answered_from_what_fits_the_budget(module_memory: Memory) -> None:
    """A budgeted answer picks from a budget's worth of chunks, so its bar is drawn from as many:
    the dense passages the packer fits, never more than the budget's tokens, and at a small
    budget a subset of the five whole passages an unbudgeted bar uses (so the bar is no higher)."""
    from engramdb.retrieval.evidence import dense_passage_rows, passage_evidence
    from engramdb.retrieval.evidence_answer import EvidenceAnswerer
    from engramdb.retrieval.packing import PASSAGE_POOL, pack
    from engramdb.retrieval.rerankers import OfflineReranker
    from engramdb.retrieval.strategy import AskContext

    context = AskContext(
        module_memory.graph, module_memory.vectors, module_memory.embedder, OfflineReranker()
    )
    whole, small = EvidenceAnswerer(context), EvidenceAnswerer(context, budget=64)
    question = "Where was the director of the film born?"
    query = context.embedder.embed_query(question)
    rows = dense_passage_rows(context.graph, context.vectors, context.embedder, question, PASSAGE_POOL, query)
    packed = pack(passage_evidence(rows), 64, focus=[question])
    assert small._probe_chunks(question, query) == [e.id for e in packed]
    assert 0 < len(packed) < len(whole._probe_chunks(question, query)) == 5
    assert set(small._probe_chunks(question, query)) <= set(whole._probe_chunks(question, query))
    assert small.na_threshold() <= whole.na_threshold()


def test_two_hop_probes_are_composed_as_one_question() -> None:
    from engramdb.retrieval.na_calibration import composed_question

    assert composed_question(("Where was Marie Curie born?",)) == "Where was Marie Curie born?"
    assert composed_question(
        ("Who is the director of Jump for Glory?", "Who is the spouse of <ENTITY_Q1>?")
    ) == ("Who is the spouse of the director of Jump for Glory?")
    assert composed_question(("When was Brand published?", "Where was <ENTITY_Q1> born?")) is None
    assert composed_question(("Who is the author of Brand?", "Where was Ibsen born?")) is None


def test_deleting_the_last_document_clears_the_hierarchy_instead_of_walking_it(
    shared: Shared, corpus: list[dict], driver
) -> None:
    """While another document's chunks are in the hierarchy a delete walks it level by level; the
    last document's delete would dissolve every cluster, so the stage clears the hierarchy at once
    (nodes, links, replicas, vectors and markers), which is what the walk would end with."""
    namespace = f"cl{uuid.uuid4().hex[:12]}"
    halves = {"first": corpus[:8], "second": corpus[8:16]}
    docs = [
        {"title": f"The {name} half", "text": "\n\n".join(p["text"] for p in part)}
        for name, part in halves.items()
    ]
    with Memory(namespace=namespace, settings=shared.settings) as memory:
        memory.ingest(docs)
        stage = memory.ingestor.stages[0]
        ids = [make_document(d["text"], title=d["title"]).id for d in docs]
        chunks = {
            doc_id: len(memory.graph.read("stages/document_chunk_ids", doc_id=doc_id)) for doc_id in ids
        }
        assert all(n > 1 for n in chunks.values()) and stage.health()["clusters"] > 0

        memory.delete(ids[0])
        assert stage.last_delete is not None and "cleared" not in stage.last_delete.written
        assert stage.last_delete.written["levels_touched"] >= 1
        assert_healthy(stage, chunks[ids[1]])
        assert stage.health()["clusters"] > 0

        memory.delete(ids[1])
        assert stage.last_delete is not None and stage.last_delete.written == {"cleared": 1}
        assert assert_healthy(stage, 0)["clusters"] == 0
        with driver.session() as session:
            left = session.run(
                "MATCH (n {namespace: $ns}) WHERE n:Cluster OR n:Replica RETURN count(n) AS nodes",
                ns=namespace,
            ).single()["nodes"]
        assert left == 0 and memory.stats()["documents"] == 0


def test_with_a_budget_summaries_fill_the_room_where_the_whole_passages_end(
    module_memory: Memory, corpus: list[dict]
) -> None:
    """Member passages take turns with dense search's passages; a summary never pushes one of them
    out, it only takes the room where the whole passages end (and may itself be cut to fit)."""
    from engramdb.retrieval.cluster.strategy import ClusterStrategy
    from engramdb.retrieval.rerankers import OfflineReranker
    from engramdb.retrieval.strategy import AskContext

    stage = make_stage(module_memory, **DENSE)
    stage.clear()
    stage.index_namespace()
    context = AskContext(
        module_memory.graph, module_memory.vectors, module_memory.embedder, OfflineReranker()
    )
    seen_summary = 0
    for item in corpus[:8]:
        for budget in (128, 256):
            strategy = ClusterStrategy(context, ClusterStrategy.recipe_type(budget=budget))
            result = strategy.ask(f"What is known about {item['title']}?")
            assert result.evidence_tokens <= budget
            kinds = [e.kind for e in result.evidence]
            if "cluster" not in kinds:
                continue
            seen_summary += 1
            first = kinds.index("cluster")
            # before the first summary come exactly the passages packed whole without any summary
            plain = ClusterStrategy(context, ClusterStrategy.recipe_type(budget=budget, summaries=0))
            alone = plain.ask(f"What is known about {item['title']}?").evidence
            whole = [
                e.id
                for e in alone[
                    : next((i for i, e in enumerate(alone) if e.metadata.get("shortened")), len(alone))
                ]
            ]
            assert [e.id for e in result.evidence[:first]] == whole, kinds
    assert seen_summary > 0


def test_with_a_budget_the_surest_dense_passages_fill_half_of_it_before_the_members_take_turns(
    module_memory: Memory, corpus: list[dict]
) -> None:
    """At 512 tokens Prune-and-Grow's member passages no longer push out dense search's next
    passages from the first turn: dense's surest passages, whole, fill the first half of the budget."""
    from engramdb.retrieval.cluster.strategy import DENSE_SHARE, ClusterStrategy
    from engramdb.retrieval.evidence import passage_evidence, text_tokens
    from engramdb.retrieval.packing import PASSAGE_POOL
    from engramdb.retrieval.rerankers import OfflineReranker
    from engramdb.retrieval.strategy import AskContext

    stage = make_stage(module_memory, **DENSE)
    stage.clear()
    stage.index_namespace()
    context = AskContext(
        module_memory.graph, module_memory.vectors, module_memory.embedder, OfflineReranker()
    )
    strategy = ClusterStrategy(context, ClusterStrategy.recipe_type(budget=512))
    led_by_two = 0
    for item in corpus[:8]:
        question = f"What is known about {item['title']}?"
        rows = dense_passage_rows(context.graph, context.vectors, context.embedder, question, PASSAGE_POOL)
        found = passage_evidence(rows)
        sizes, room, leading = text_tokens([e.text for e in found]), 512 * DENSE_SHARE, 0
        while leading < len(sizes) and sizes[leading] <= room:
            room -= sizes[leading]
            leading += 1
        result = strategy.ask(question)
        assert result.evidence_tokens <= 512
        head = result.evidence[:leading]
        assert [e.id for e in head] == [e.id for e in found[:leading]]
        assert not any(e.metadata.get("shortened") for e in head)
        led_by_two += leading >= 2
    assert led_by_two > 0

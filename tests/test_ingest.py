"""Ingestion end to end on the real Neo4j and embedded Qdrant, offline extractor."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engramdb.ingestion.documents import make_document
from engramdb.platform.errors import InputError
from engramdb.platform.interfaces.memory import Memory

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


def _count(driver, query: str, **params) -> int:
    records, _, _ = driver.execute_query(query, **params)
    return records[0][0]


def test_stats_equal_what_the_extractor_produced(memory: Memory, musique_corpus) -> None:
    passages = musique_corpus[:25]
    report = memory.ingest(passages)
    stats = memory.stats()
    assert report.ingested == stats["documents"] == stats["documents_done"] == 25
    assert report.chunks == stats["chunks"]
    assert report.verb_phrases == stats["verb_phrases"]
    assert report.qa_pairs == stats["qa_pairs"] == stats["qa_vectors"]
    assert report.qa_edges == stats["qa_edges"]
    assert stats["chunk_vectors"] == stats["chunks"]
    assert report.qa_pairs > 25  # the extractor found facts in these passages
    assert 0 < stats["entities"] <= report.entity_mentions


def test_reingest_adds_nothing(memory: Memory, musique_corpus) -> None:
    passages = musique_corpus[:10]
    memory.ingest(passages)
    before = memory.stats()
    again = memory.ingest(passages)
    assert again.skipped == 10 and again.ingested == 0 and again.qa_pairs == 0
    assert memory.stats() == before


def test_delete_cascades_but_shared_entities_survive(memory: Memory, driver) -> None:
    memory.ingest([CURIE, WARSAW])
    ns = memory.namespace
    shared = _count(
        driver,
        "MATCH (:Chunk {namespace: $ns, doc_id: 'curie'})-[:MENTIONS]->(e:Entity)"
        "<-[:MENTIONS]-(:Chunk {namespace: $ns, doc_id: 'warsaw'}) RETURN count(DISTINCT e)",
        ns=ns,
    )
    assert shared >= 1  # Warsaw is one reconciled node
    curie_qa = memory.vectors.count("qa", ns, where={"doc_id": "curie"})
    assert curie_qa > 0

    report = memory.delete("curie")
    assert report.deleted_entities >= 1  # e.g. Marie Curie, 1867 exist only in that document
    # where the delete's time went: each memory stage, the vectors, the graph
    steps = {"vectors", "graph", *(f"{stage.name} stage" for stage in memory.ingestor.stages)}
    assert set(report.step_seconds) == steps and min(report.step_seconds.values()) >= 0
    # the vectors go beside the stages: the wall time is at least the longest step, at most their sum
    assert max(report.step_seconds.values()) <= report.seconds <= sum(report.step_seconds.values()) + 0.05

    for query in (
        "MATCH (n {namespace: $ns}) WHERE n.doc_id = 'curie' OR n.id = 'curie' RETURN count(n)",
        "MATCH ()-[r {namespace: $ns}]->() WHERE r.doc_id = 'curie' RETURN count(r)",
        "MATCH (e:Entity {namespace: $ns}) WHERE NOT (e)<-[:MENTIONS]-() RETURN count(e)",
        "MATCH (e:Entity {namespace: $ns}) WHERE e.name = 'Marie Curie' RETURN count(e)",
    ):
        assert _count(driver, query, ns=ns) == 0, query
    assert memory.vectors.count("qa", ns, where={"doc_id": "curie"}) == 0
    assert memory.vectors.count("chunks", ns, where={"doc_id": "curie"}) == 0
    assert memory.vectors.count("chunks", ns, where={"doc_id": "warsaw"}) == 1
    assert _count(driver, "MATCH (e:Entity {namespace: $ns, name: 'Warsaw'}) RETURN count(e)", ns=ns) == 1
    assert memory.stats()["qa_pairs"] == memory.stats()["qa_vectors"] > 0

    with pytest.raises(InputError, match="no document 'curie'"):
        memory.delete("curie")


def test_a_delete_cut_short_before_the_graph_leaves_the_document_to_redo_not_done(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The vectors and stage memory go before the graph. If the process stops between the two,
    the Document must already say it is incomplete: still 'done', a later ingest of the same
    file would skip it and its QA vectors would stay lost."""
    memory.ingest([CURIE, WARSAW])
    ns = memory.namespace
    before = memory.vectors.count("qa", ns, where={"doc_id": "curie"})
    graph = memory.ingestor.graph
    write = graph.write

    def dies_at_the_graph(query: str, **params):
        if query == "writers/delete_document_part":
            raise KeyboardInterrupt("stopped before the graph part")
        return write(query, **params)

    monkeypatch.setattr(graph, "write", dies_at_the_graph)
    with pytest.raises(KeyboardInterrupt):
        memory.delete("curie")
    monkeypatch.setattr(graph, "write", write)
    assert memory.vectors.count("qa", ns, where={"doc_id": "curie"}) == 0  # the vectors went first
    assert memory.document_status(["curie"])["curie"]["status"] == "pending"

    again = memory.ingest([CURIE])  # the same content: redone, not skipped
    assert again.ingested == 1 and again.skipped == 0
    assert memory.vectors.count("qa", ns, where={"doc_id": "curie"}) == before
    stats = memory.stats()
    assert stats["qa_pairs"] == stats["qa_vectors"] and stats["documents_done"] == 2


def test_a_stage_failing_its_delete_fails_the_delete_and_the_other_stages_still_forget(
    memory: Memory, driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stages forget a document side by side: one that fails must not go unnoticed (the
    delete raises, the graph is left alone, the document stays pending) nor stop the others."""
    memory.ingest([CURIE, WARSAW])
    ns = memory.namespace
    first, *others = memory.ingestor.stages
    assert {first.name, *(s.name for s in others)} >= {"gists", "clusters"}
    gists_of = "MATCH (g:Gist {namespace: $ns, doc_id: 'curie'}) RETURN count(g)"
    assert _count(driver, gists_of, ns=ns) == 1

    def fails(doc_id: str, chunk_ids) -> None:
        raise RuntimeError(f"the {first.name} stage could not forget")

    monkeypatch.setattr(first, "delete_document", fails)
    with pytest.raises(RuntimeError, match="could not forget"):
        memory.delete("curie")
    for stage in others:  # each later stage forgot its part all the same
        if stage.name == "gists":
            assert _count(driver, gists_of, ns=ns) == 0
        if stage.name == "clusters":
            assert stage.last_delete is not None and stage.last_delete.written["levels_touched"] >= 1
    assert _count(driver, "MATCH (c:Chunk {namespace: $ns, doc_id: 'curie'}) RETURN count(c)", ns=ns) == 1
    assert memory.document_status(["curie"])["curie"]["status"] == "pending"

    monkeypatch.undo()
    report = memory.delete("curie")  # deleting again finishes the job
    assert report.deleted_entities >= 1
    assert _count(driver, gists_of, ns=ns) == 0
    assert _count(driver, "MATCH (n {namespace: $ns}) WHERE n.doc_id = 'curie' RETURN count(n)", ns=ns) == 0
    assert memory.stats()["documents"] == 1


def test_changed_document_replaces_its_memory(memory: Memory, driver) -> None:
    memory.ingest([CURIE])
    changed = {**CURIE, "text": "Marie Curie was born in Warsaw. She later moved to Paris."}
    report = memory.ingest([changed])
    assert report.replaced == 1 and report.ingested == 1
    ns = memory.namespace
    assert _count(driver, "MATCH (e:Entity {namespace: $ns, name: '1903'}) RETURN count(e)", ns=ns) == 0
    assert _count(driver, "MATCH (c:Chunk {namespace: $ns, doc_id: 'curie'}) RETURN count(c)", ns=ns) == 1
    questions = [
        r["q"] for r in driver.execute_query(
            "MATCH ()-[q:QA {namespace: $ns}]->() RETURN q.question AS q", ns=ns).records
    ]  # fmt: skip
    assert not any("Nobel" in q for q in questions)
    assert memory.stats()["qa_vectors"] == memory.stats()["qa_pairs"]


def test_namespaces_never_see_each_other(isolated_settings, driver) -> None:
    with Memory("iso-a", isolated_settings) as a, Memory("iso-b", isolated_settings) as b:
        a.ingest([CURIE])
        assert b.stats()["documents"] == 0 and b.stats()["qa_vectors"] == 0
        b.ingest([CURIE])  # the same document id in another namespace is a separate memory
        a.delete("curie")
        assert a.stats()["qa_vectors"] == 0 and a.stats()["entities"] == 0
        assert b.stats()["documents"] == 1 and b.stats()["qa_vectors"] > 0
        b.delete("curie")


def test_bad_input_is_rejected_before_anything_is_written(memory: Memory, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[{"title": "x"}]')
    with pytest.raises(InputError, match="missing or empty 'text'"):
        memory.ingest(bad)
    bad.write_text("[{")
    with pytest.raises(InputError, match="invalid JSON"):
        memory.ingest(bad)
    with pytest.raises(InputError, match="no such file"):
        memory.ingest(str(tmp_path / "missing.json"))
    assert memory.stats()["documents"] == 0


def _ingest_command(home: Path, namespace: str, corpus: Path, settings) -> list[str]:
    return [sys.executable, "-m", "engramdb.platform.interfaces.cli", "--home", str(home), "-n", namespace,
            "ingest", str(corpus), "--batch-size", "8"]  # fmt: skip


def test_sigkill_midway_then_rerun_equals_clean_run(
    isolated_settings, tmp_path: Path, driver, musique_corpus
) -> None:
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps(musique_corpus[:40]))
    env = {**os.environ, "ENGRAMDB_NEO4J_URI": isolated_settings.neo4j_uri,
           "ENGRAMDB_NEO4J_PASSWORD": isolated_settings.neo4j_password.get_secret_value()}  # fmt: skip
    killed_home, clean_home = tmp_path / "killed", tmp_path / "clean"
    ns_killed, ns_clean = f"k{os.getpid()}{int(time.time())}", f"c{os.getpid()}{int(time.time())}"

    proc = subprocess.Popen(
        _ingest_command(killed_home, ns_killed, corpus, isolated_settings), env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path,
    )  # fmt: skip
    deadline = time.monotonic() + 300
    done = 0
    while time.monotonic() < deadline and proc.poll() is None:
        done = _count(
            driver, "MATCH (d:Document {namespace: $ns, status: 'done'}) RETURN count(d)", ns=ns_killed
        )
        if done >= 8:
            break
        time.sleep(0.2)
    assert proc.poll() is None, "ingest finished before it could be interrupted"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert 8 <= done < 40

    for home, ns in ((killed_home, ns_killed), (clean_home, ns_clean)):
        result = subprocess.run(_ingest_command(home, ns, corpus, isolated_settings), env=env,
                                capture_output=True, text=True, cwd=tmp_path)  # fmt: skip
        assert result.returncode == 0, result.stderr

    def snapshot(home: Path, ns: str) -> dict:
        settings = isolated_settings.model_copy(update={"home": home})
        with Memory(ns, settings) as mem:
            stats = mem.stats()
        stats.pop("namespace")
        return stats

    resumed, clean = snapshot(killed_home, ns_killed), snapshot(clean_home, ns_clean)
    assert resumed == clean
    assert clean["documents_done"] == 40 and clean["qa_vectors"] == clean["qa_pairs"] > 0


def test_memory_made_by_another_pipeline_version_is_redone(memory: Memory, driver) -> None:
    memory.ingest([CURIE, WARSAW])
    before = memory.stats()
    driver.execute_query(
        "MATCH (d:Document {namespace: $ns, id: 'curie'}) SET d.ingest_version = 'older'", ns=memory.namespace
    )
    report = memory.ingest([CURIE, WARSAW])
    assert report.ingested == 1 and report.skipped == 1 and report.replaced == 0
    assert memory.stats() == before


def test_spelling_variants_join_one_entity_but_look_alikes_do_not(memory: Memory, driver) -> None:
    # separate ingests: embedding candidates are looked up among entities already stored
    memory.ingest(
        [{"id": "a", "title": "Fyodor Dostoevsky", "text": "Fyodor Dostoevsky was a Russian novelist."}]
    )
    memory.ingest([{"id": "b", "title": "Moscow", "text": "Fyodor Dostoyevsky was born in Moscow."}])
    memory.ingest([{"id": "c", "title": "Kim Jong-il", "text": "Kim Jong-il was the father of Kim Jong-un."}])
    records, _, _ = driver.execute_query(
        "MATCH (e:Entity {namespace: $ns}) WHERE e.name STARTS WITH 'Fyodor' OR e.name STARTS WITH 'Kim Jong' "
        "RETURN e.name AS name, e.aliases AS aliases, COUNT { (e)<-[:MENTIONS]-(:Chunk) } AS mentions",
        ns=memory.namespace,
    )
    by_name = {r["name"]: r for r in records}
    assert set(by_name) == {"Fyodor Dostoevsky", "Kim Jong-il", "Kim Jong-un"}
    assert by_name["Fyodor Dostoevsky"]["mentions"] == 2
    assert "Fyodor Dostoyevsky" in by_name["Fyodor Dostoevsky"]["aliases"]

    memory.delete("b")  # the variant's document goes; the entity stays, without the alias
    aliases = driver.execute_query(
        "MATCH (e:Entity {namespace: $ns, name: 'Fyodor Dostoevsky'}) RETURN e.aliases AS a",
        ns=memory.namespace,
    ).records[0]["a"]
    assert "Fyodor Dostoyevsky" not in aliases
    memory.delete("a")
    assert memory.vectors.count("entities", memory.namespace, where={"kind": "PERSON"}) == 2  # only the Kims


# ------------------------------------------------------------------ hostile input


def test_binary_and_control_character_text_is_rejected_by_name(memory: Memory, tmp_path: Path) -> None:
    zeros = tmp_path / "zeros.txt"
    zeros.write_bytes(b"\x00" * 4096)
    with pytest.raises(InputError, match=r"zeros\.txt contains a NUL byte at byte 0"):
        memory.ingest(zeros)
    noise = tmp_path / "noise.md"
    noise.write_text("".join(chr(c) for c in range(1, 9)) * 200 + " a few words")
    with pytest.raises(
        InputError, match=r"noise\.md'.*1600 of its 1609 non-whitespace characters are control"
    ):
        memory.ingest(noise)
    corpus = tmp_path / "corpus.json"
    corpus.write_text(
        json.dumps([{"title": "Fine", "text": "Fine text."}, {"title": "Bad", "text": "abc\u0000def"}])
    )
    with pytest.raises(InputError, match=r"corpus\.json item 1: document 'Bad'.*NUL byte at character 3"):
        memory.ingest(corpus)
    with pytest.raises(InputError, match=r"the title of document 'x'.*NUL"):
        memory.ingest([{"id": "x", "title": "T\u0000", "text": "Plain text."}])
    assert memory.stats()["documents"] == 0  # nothing of a rejected input is written

    ordinary = "Line one.\r\n\tIndented line two.\fPage two with a \x1b[1mbold\x1b[0m word from a log file."
    assert memory.ingest([{"id": "ordinary", "text": ordinary}]).ingested == 1


def test_a_stored_name_found_by_the_alias_lookup_still_counts_as_the_nodes_name(memory: Memory) -> None:
    """Reconciliation reads stored nodes by name, then by alias key, in two reads. A node another
    writer commits between them is seen only by the second, under its own name (a node's alias keys
    hold its name): it must count as named there, or a one-word name ("Sweden") would not join
    across documents and a second writer's mention would make a second node of it."""
    memory.ingest([{"id": "lund", "title": "Anna Berg",
                    "text": "Anna Berg was born in Lund in 1900. Anna Berg later taught history at a school in Sweden."}])  # fmt: skip
    ingestor = memory.ingestor
    by_alias = ingestor.graph.read("traversals/entities_by_alias_key", keys=["sweden"])
    assert by_alias and all(row["own_name"] for row in by_alias)  # the alias read alone finds it
    stored = ingestor._existing_entities(["sweden"])
    assert {s.via for s in stored} == {"name"} and len({s.id for s in stored}) == 1
    # a resolver that only ever saw the alias read (the race) joins a later document's mention to it
    from engramdb.ingestion.pipeline import stored_entity
    from engramdb.ingestion.reconcile import EntityResolver

    resolver = EntityResolver(
        lambda keys: [stored_entity(r, "alias")
                      for r in ingestor.graph.read("traversals/entities_by_alias_key", keys=keys)]
    )  # fmt: skip
    resolver.prime(["sweden"])
    assert resolver.resolve("Sweden", type_="PLACE", doc_id="another")[0] == stored[0].id


# ------------------------------------------------------------------ type-aware reconciliation


def _reply(entities: list, verb_phrases: list, qa_pairs: list) -> str:
    """A recorded-style extraction reply (the JSON a chat model returns for one passage)."""
    return json.dumps({"entities": entities, "verb_phrases": verb_phrases, "qa_pairs": qa_pairs})


def _entity(eid: str, name: str, type_: str, role: str) -> dict:
    return {"id": eid, "name": name, "type": type_, "roles": [{"role": role, "states": []}], "aliases": []}


def _qa(qid: str, vp: str, question: str, asked: list[str], answers: list[str]) -> dict:
    return {"id": qid, "verb_phrase_id": vp, "question": question, "question_entity_ids": asked,
            "answer_entity_ids": answers}  # fmt: skip


BAND = {"id": "band", "title": "Iron Maiden",
        "text": "Iron Maiden are an English heavy metal band formed in Leyton in 1975 by bassist Steve Harris."}  # fmt: skip
BAND_REPLY = _reply(
    [_entity("e1", "Iron Maiden", "ORG", "heavy metal band"), _entity("e2", "Leyton", "PLACE", "place of formation"),
     _entity("e3", "1975", "DATE", "year of formation"), _entity("e4", "Steve Harris", "PERSON", "bassist")],
    [{"id": "v1", "text": "was formed in"}, {"id": "v2", "text": "founded"}],
    [_qa("q1", "v1", "Where was Iron Maiden formed?", ["e1"], ["e2"]),
     _qa("q2", "v1", "When was Iron Maiden formed?", ["e1"], ["e3"]),
     _qa("q3", "v1", "Which band was formed in Leyton in 1975?", ["e2", "e3"], ["e1"]),
     _qa("q4", "v2", "Who founded Iron Maiden?", ["e1"], ["e4"]),
     _qa("q5", "v2", "Which band did Steve Harris found?", ["e4"], ["e1"])],
)  # fmt: skip
SONG = {"id": "song", "title": "Iron Maiden (song)",
        "text": '"Iron Maiden" is a song written by Steve Harris and released in 1980 on the band\'s debut album.'}  # fmt: skip
SONG_REPLY = _reply(
    [_entity("e1", "Iron Maiden", "WORK", "song"), _entity("e2", "Steve Harris", "PERSON", "songwriter"),
     _entity("e3", "1980", "DATE", "release year")],
    [{"id": "v1", "text": "wrote"}, {"id": "v2", "text": "was released in"}],
    [_qa("q1", "v1", "Who wrote Iron Maiden?", ["e1"], ["e2"]),
     _qa("q2", "v1", "Which song did Steve Harris write?", ["e2"], ["e1"]),
     _qa("q3", "v2", "When was Iron Maiden released?", ["e1"], ["e3"]),
     _qa("q4", "v2", "Which song was released in 1980?", ["e3"], ["e1"])],
)  # fmt: skip


def _entities_by_document(driver, namespace: str) -> list[dict]:
    records, _, _ = driver.execute_query(
        "MATCH (e:Entity {namespace: $ns})<-[m:MENTIONS]-(c:Chunk) "
        "RETURN e.id AS id, e.name AS name, e.types AS types, e.aliases AS aliases, collect(DISTINCT c.doc_id) AS docs",
        ns=namespace,
    )
    return [r.data() for r in records]


def test_a_band_and_its_song_stay_apart_while_their_songwriter_merges(memory: Memory, driver) -> None:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from engramdb.ingestion.extraction.llm import LLMExtractor
    from engramdb.ingestion.pipeline import Ingestor

    model = FakeListChatModel(responses=[BAND_REPLY, SONG_REPLY])
    extractor = LLMExtractor(model, namespace=memory.namespace, concurrency=1)
    ingestor = Ingestor(memory.graph, memory.vectors, memory.embedder, extractor)
    assert ingestor.ingest([make_document(BAND["text"], title=BAND["title"], id="band")]).ingested == 1
    assert ingestor.ingest([make_document(SONG["text"], title=SONG["title"], id="song")]).ingested == 1

    entities = _entities_by_document(driver, memory.namespace)
    maidens = sorted((e["types"], e["docs"]) for e in entities if e["name"] == "Iron Maiden")
    assert maidens == [(["ORG"], ["band"]), (["WORK"], ["song"])]  # two nodes, each from its own document
    harris = [e for e in entities if e["name"] == "Steve Harris"]
    assert len(harris) == 1 and sorted(harris[0]["docs"]) == ["band", "song"]  # same kind: one node
    song_id = next(e["id"] for e in entities if e["name"] == "Iron Maiden" and e["types"] == ["WORK"])
    records, _, _ = driver.execute_query(
        "MATCH ()-[q:QA {namespace: $ns}]->() WHERE q.question = 'Who wrote Iron Maiden?' "
        "RETURN q.question_entity_ids AS ids",
        ns=memory.namespace,
    )
    assert [r["ids"] for r in records] == [[song_id]]


HANK_SNOW = {"id": "hank-snow", "title": "Hank Snow",
             "text": 'Clarence Eugene "Hank" Snow (May 9, 1914 - December 20, 1999) was a Canadian-American country '
                     "music artist. Hank Snow was born in Brooklyn, Nova Scotia. Snow recorded more than 140 albums "
                     "for RCA Victor."}  # fmt: skip
BLIZZARD = {"id": "blizzard", "title": "Chicago blizzard of 1967",
            "text": "Snow fell on Chicago for three days in January 1967. Snow covered the streets of Chicago and "
                    "closed O'Hare Airport."}  # fmt: skip


@pytest.mark.parametrize("together", [False, True], ids=["separate-ingests", "one-batch"])
def test_a_surname_alias_does_not_capture_another_documents_snow(
    memory: Memory, driver, together: bool
) -> None:
    memory.ingest([HANK_SNOW, BLIZZARD] if together else [HANK_SNOW])
    if not together:
        memory.ingest([BLIZZARD])
    entities = _entities_by_document(driver, memory.namespace)
    (hank,) = [e for e in entities if e["name"] == "Hank Snow"]
    assert "Snow" in hank["aliases"]  # what the offline extractor makes of the biography
    assert hank["docs"] == ["hank-snow"]
    weather = [e for e in entities if "blizzard" in e["docs"]]
    assert any(e["name"].lower() == "snow" for e in weather)  # the weather's snow is an entity of its own
    assert all(e["id"] != hank["id"] for e in weather)

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

from engramdb.platform.errors import InputError
from engramdb.platform.memory import Memory

CURIE = {"id": "curie", "title": "Marie Curie", "text": "Marie Curie was born in Warsaw in 1867. She won the Nobel Prize in Physics in 1903."}
WARSAW = {"id": "warsaw", "title": "Warsaw", "text": "Warsaw is the capital of Poland. Warsaw lies on the Vistula River."}


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
    return [sys.executable, "-m", "engramdb.platform.cli", "--home", str(home), "-n", namespace,
            "ingest", str(corpus), "--batch-size", "8"]  # fmt: skip


def test_sigkill_midway_then_rerun_equals_clean_run(isolated_settings, tmp_path: Path, driver, musique_corpus) -> None:
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps(musique_corpus[:80]))
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
        done = _count(driver, "MATCH (d:Document {namespace: $ns, status: 'done'}) RETURN count(d)", ns=ns_killed)
        if done >= 16:
            break
        time.sleep(0.2)
    assert proc.poll() is None, "ingest finished before it could be interrupted"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert 16 <= done < 80

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
    assert clean["documents_done"] == 80 and clean["qa_vectors"] == clean["qa_pairs"] > 0


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
    memory.ingest([{"id": "a", "title": "Fyodor Dostoevsky", "text": "Fyodor Dostoevsky was a Russian novelist."}])
    memory.ingest([{"id": "b", "title": "Moscow", "text": "Fyodor Dostoyevsky was born in Moscow."}])
    memory.ingest([{"id": "c", "title": "Kim Jong-il", "text": "Kim Jong-il was the father of Kim Jong-un."}])
    records, _, _ = driver.execute_query(
        "MATCH (e:Entity {namespace: $ns}) WHERE e.name STARTS WITH 'Fyodor' OR e.name STARTS WITH 'Kim Jong' "
        "RETURN e.name AS name, e.aliases AS aliases, COUNT { (e)<-[:MENTIONS]-() } AS mentions",
        ns=memory.namespace,
    )
    by_name = {r["name"]: r for r in records}
    assert set(by_name) == {"Fyodor Dostoevsky", "Kim Jong-il", "Kim Jong-un"}
    assert by_name["Fyodor Dostoevsky"]["mentions"] == 2
    assert "Fyodor Dostoyevsky" in by_name["Fyodor Dostoevsky"]["aliases"]

    memory.delete("b")  # the variant's document goes; the entity stays, without the alias
    aliases = driver.execute_query(
        "MATCH (e:Entity {namespace: $ns, name: 'Fyodor Dostoevsky'}) RETURN e.aliases AS a", ns=memory.namespace
    ).records[0]["a"]
    assert "Fyodor Dostoyevsky" not in aliases
    memory.delete("a")
    assert memory.vectors.count("entities", memory.namespace, where={"kind": "PERSON"}) == 2  # only the Kims

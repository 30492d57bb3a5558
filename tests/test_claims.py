"""Document claims on the real Neo4j: writers sharing one graph never take the same document.

The claim query locks each node before reading it; these tests race real
transactions against it, and check the rules for holders that died or whose
lease ran out. The end-to-end form (two ``engramdb serve`` processes given the
same input at once) is in tests/test_server.py.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time

import pytest

from engramdb.ingestion.claims import DocumentClaims, holder_is_gone
from engramdb.ingestion.documents import make_document
from engramdb.ingestion.writer import write_documents
from engramdb.platform.errors import InputError
from engramdb.platform.graph import Graph
from engramdb.platform.interfaces.memory import Memory

VERSION = "test-version"


def docs(count: int) -> list:
    return [
        make_document(f"Person{i} was born in Town{i}.", title=f"Person {i}", id=f"d{i}")
        for i in range(count)
    ]


def dead_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def finish(graph: Graph, claims: DocumentClaims, documents: list) -> None:
    """What an ingest writes once a document is in: its row (with the content hash), then its status."""
    write_documents(graph, documents)
    graph.write("writers/set_document_status", rows=[
        {"id": d.id, "status": "done", "error": None, "chunk_count": 1, "qa_count": 0,
         "ingest_version": VERSION, "writer": claims.writer} for d in documents
    ])  # fmt: skip


def test_racing_writers_each_get_a_document_exactly_once(graph: Graph) -> None:
    """Eight writers claim the same 30 documents at the same moment: every document has one owner.

    The documents exist already (pending, as an interrupted ingest leaves them): a node that a
    claim creates is serialised by its uniqueness constraint anyway, an existing one only by the
    lock the claim takes before it reads."""
    documents = docs(30)
    write_documents(graph, documents)
    writers = [DocumentClaims(graph, VERSION) for _ in range(8)]
    start = threading.Barrier(len(writers))
    won: dict[str, list[str]] = {}
    errors: list[BaseException] = []

    def run(claims: DocumentClaims) -> None:
        try:
            start.wait()
            result = claims.claim(documents)
            won[claims.writer] = [d.id for d in result.claimed]
            assert {d.id for d in result.claimed} | {d.id for d in result.busy} == {d.id for d in documents}
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=run, args=(w,)) for w in writers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert errors == []
    owners = [doc_id for ids in won.values() for doc_id in ids]
    assert sorted(owners) == sorted(d.id for d in documents)  # each exactly once
    rows = graph.read("traversals/get_documents", ids=[d.id for d in documents])
    assert {r["id"]: r["claimed_by"] for r in rows} == {
        doc_id: writer for writer, ids in won.items() for doc_id in ids
    }


def test_a_busy_document_is_found_done_once_its_writer_finishes(graph: Graph) -> None:
    documents = docs(3)
    first, second = DocumentClaims(graph, VERSION), DocumentClaims(graph, VERSION)
    assert [d.id for d in first.claim(documents).claimed] == ["d0", "d1", "d2"]
    waiting = second.claim(documents)
    assert waiting.claimed == [] and len(waiting.busy) == 3
    assert set(waiting.holders.values()) == {first.writer}
    finish(graph, first, documents[:2])
    again = second.claim(documents)
    assert [d.id for d in again.finished] == ["d0", "d1"] and [d.id for d in again.busy] == ["d2"]
    rows = {r["id"]: r for r in graph.read("traversals/get_documents", ids=["d0", "d2"])}
    assert rows["d0"]["claimed_by"] is None and rows["d2"]["claimed_by"] == first.writer
    # the same content under another ingest version is redone, by whoever claims it
    redo = DocumentClaims(graph, "another-version").claim(documents[:1])
    assert [d.id for d in redo.claimed] == ["d0"] and redo.has_memory == {"d0"}


def test_a_released_claim_is_free_at_once_and_a_claim_made_by_itself_left_no_memory(graph: Graph) -> None:
    documents = docs(2)
    first, second = DocumentClaims(graph, VERSION), DocumentClaims(graph, VERSION)
    first.claim(documents)
    first.release(["d0"])
    result = second.claim(documents)
    assert [d.id for d in result.claimed] == ["d0"] and [d.id for d in result.busy] == ["d1"]
    assert result.has_memory == set()  # a node only a claim made: nothing to clear


def test_a_dead_holder_here_is_taken_over_at_once_and_a_remote_one_when_its_lease_ends(graph: Graph) -> None:
    documents = docs(2)
    dead = DocumentClaims(graph, VERSION)
    dead.writer = f"{socket.gethostname()}/{dead_pid()}/feedbeef"
    dead.claim(documents[:1])
    remote = DocumentClaims(graph, VERSION, lease_seconds=1.0)
    remote.writer = "a-host-that-is-not-this-one/1/cafe0001"
    remote.claim(documents[1:])
    assert holder_is_gone(dead.writer) and not holder_is_gone(remote.writer)

    me = DocumentClaims(graph, VERSION)
    first = me.claim(documents)  # it learns who holds them
    assert first.claimed == [] and first.holders == {"d0": dead.writer, "d1": remote.writer}
    second = me.claim(documents, first.holders.values())
    assert [d.id for d in second.claimed] == ["d0"] and [d.id for d in second.busy] == ["d1"]
    time.sleep(1.2)  # the remote holder renewed nothing: its lease (on Neo4j's clock) has run out
    assert [d.id for d in me.claim(documents[1:], first.holders.values()).claimed] == ["d1"]


def test_a_live_process_here_is_not_gone_and_a_malformed_holder_is_never_judged() -> None:
    import os

    assert not holder_is_gone(f"{socket.gethostname()}/{os.getpid()}/abcd")
    assert not holder_is_gone("no-slashes-at-all")
    assert not holder_is_gone(f"{socket.gethostname()}/not-a-pid/abcd")


def test_a_lease_must_be_positive(graph: Graph) -> None:
    with pytest.raises(ValueError, match="lease"):
        DocumentClaims(graph, VERSION, lease_seconds=0)


def test_ingest_records_its_writer_and_delete_refuses_a_document_another_writer_holds(
    memory: Memory, graph: Graph
) -> None:
    report = memory.ingest(
        [{"id": "curie", "title": "Marie Curie", "text": "Marie Curie was born in Warsaw."}]
    )
    assert report.ingested == 1 and report.ingested_elsewhere == 0
    row = graph.read("traversals/get_documents", ids=["curie"])[0]
    assert row["status"] == "done" and row["claimed_by"] is None
    ingested_by = graph.driver.execute_query(
        "MATCH (d:Document {namespace: $ns, id: 'curie'}) RETURN d.ingested_by", ns=memory.namespace
    ).records[0][0]
    assert ingested_by == memory.ingestor.claims.writer

    other = DocumentClaims(graph, memory.ingestor.ingest_version)
    other.writer = "a-host-that-is-not-this-one/7/0badf00d"
    make = [make_document("Marie Curie was born in Warsaw in 1867.", title="Marie Curie", id="curie")]
    assert [d.id for d in other.claim(make).claimed] == ["curie"]  # changed content: claimed to redo
    with pytest.raises(
        InputError, match=r"being ingested right now: 'curie' \(by a-host-that-is-not-this-one"
    ):
        memory.delete("curie")
    assert [d["id"] for d in memory.documents()] == ["curie"]  # nothing was deleted
    other.release(["curie"])
    memory.delete("curie")
    assert memory.documents() == []

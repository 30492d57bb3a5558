"""``engramdb.connect``: Memory's methods over HTTP against a real ``engramdb serve``.

The servers are started exactly as tests/test_server.py starts them (its helpers
are imported); every one is stopped by the test or fixture that started it.
The remote results are compared with an in-process ``Memory`` on the same data
home: the embedded vector store has one owner, so the test stops the server
first, asks through the SDK, and starts the server again.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import engramdb
from engramdb.ingestion.pipeline import DeleteReport, IngestReport
from engramdb.platform.errors import InputError
from engramdb.platform.interfaces.client import ServerError, connect
from engramdb.platform.interfaces.memory import Memory
from engramdb.retrieval.results import (
    AskResult,
    Chain,
    ChainDetails,
    ChainStep,
    Citation,
    Details,
    Evidence,
    HopTrace,
    PassageDetails,
    QACandidate,
    RawDetails,
)
from tests.conftest import private_settings
from tests.test_server import CORPUS, ONE_HOP, TWO_HOP, Served, start_server

#: (strategy, question, budget) asked remotely and in process.
ASKS = [("chain", ONE_HOP, None), ("chain", TWO_HOP, None), ("dense", ONE_HOP, None),
        ("chain", ONE_HOP, 32), ("dense", ONE_HOP, 32)]  # fmt: skip


def comparable(result: AskResult) -> dict[str, Any]:
    """A result as JSON carries it, without its timings (the only part that varies between runs)."""
    data = json.loads(json.dumps(result.to_dict(), default=str))
    data.pop("timings")
    return data


@pytest.fixture(scope="module")
def served(tmp_path_factory, neo4j_server, settings, driver) -> Iterator[Served]:
    """One server for the error tests, stopped at the end whatever happened."""
    root = tmp_path_factory.mktemp("client-server")
    server = start_server(private_settings(root / "home", neo4j_server, settings), root)
    try:
        yield server
    finally:
        server.stop()


# --------------------------------------------------------------------------- from_dict, no server


def _chain_result() -> AskResult:
    qa = QACandidate(qa_id="qa1", question="Where did Hank Snow die?", answer_ids=("e1",),
                     answer_names=("Madison, Tennessee",), answer_types=("place",),
                     question_entity_ids=("e0",), doc_id="d1", chunk_id="c1", dense_score=0.9, via=("dense",))  # fmt: skip
    step = ChainStep(sub_question=qa.question, qa=qa, answer_id="e1", answer_name="Madison, Tennessee",
                     score=0.8, hop=1)  # fmt: skip
    evidence = Evidence(kind="qa_pair", id="qa1", text=qa.text, score=0.8, doc_id="d1", chunk_ids=("c1",),
                        metadata={"question": qa.question, "answers": ["Madison, Tennessee"]})  # fmt: skip
    trace = HopTrace(sequence=0, hop=1, queries=[qa.question], candidates=[(qa.question, qa.text, 0.8)],
                     kept=[("Madison", 0.8)], pruned=[])  # fmt: skip
    return AskResult(question=qa.question, answer="Madison, Tennessee", evidence=[evidence],
                     citations=[Citation("qa1", "c1", "d1", "Hank Snow")], decomposition=[[qa.question]],
                     evidence_tokens=12, timings={"total": 0.1}, decomposed_by="offline",
                     details=ChainDetails(chains=[Chain(steps=(step,), score=0.8)], trace=[trace], na={"t": 0.1}),
                     near_misses=[evidence], notes=["a note"])  # fmt: skip


@pytest.mark.parametrize(
    "details",
    [None, PassageDetails(method="dense", scores=[{"id": "c1", "dense": 0.5}]), Details()],
    ids=["chain", "passages", "none"],
)
def test_ask_result_from_dict_inverts_to_dict_through_json(details: Details | None) -> None:
    result = _chain_result()
    if details is not None:
        result.details = details
    sent = json.loads(json.dumps(result.to_dict()))
    rebuilt = AskResult.from_dict(sent)
    assert json.loads(json.dumps(rebuilt.to_dict())) == sent
    assert type(rebuilt.details) is type(result.details)
    if details is None:
        assert rebuilt == result  # tuples and nested dataclasses are rebuilt as they were
        assert rebuilt.chains[0].answer_name == "Madison, Tennessee"


def test_details_of_a_method_folder_come_back_as_raw_details_that_render_nowhere() -> None:
    sent = {"kind": "diffusion", "activated": [["e1", 0.5]]}
    rebuilt = Details.from_dict(sent)
    assert isinstance(rebuilt, RawDetails) and rebuilt.kind == "raw" and rebuilt.to_dict() == sent


def test_connect_is_exported_lazily_from_the_package() -> None:
    assert "connect" in engramdb.__all__ and engramdb.connect is connect


def test_a_token_comes_from_the_environment_when_not_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAMDB_SERVER_TOKEN", "from-env")
    with connect("http://127.0.0.1:1") as remote:
        assert remote._http.headers["authorization"] == "Bearer from-env"
    with connect("http://127.0.0.1:1", token="given") as remote:
        assert remote._http.headers["authorization"] == "Bearer given"
    monkeypatch.delenv("ENGRAMDB_SERVER_TOKEN")
    with connect("http://127.0.0.1:1") as remote:
        assert "authorization" not in remote._http.headers


# --------------------------------------------------------------------------- the round trip


def test_connect_round_trip_matches_the_sdk(tmp_path: Path, neo4j_server, settings, driver) -> None:
    """ingest -> ask (chain, dense; with and without budget) -> documents -> stats equal to Memory's on
    the same memory; then delete through the client; a stopped server is a ServerError."""
    home_settings = private_settings(tmp_path / "home", neo4j_server, settings)
    namespace = f"cl{uuid.uuid4().hex[:10]}"
    server = start_server(home_settings, tmp_path)
    try:
        with connect(server.url, token=server.token, namespace=namespace, poll_interval=0.1) as remote:
            steps: list[int] = []
            report = remote.ingest(CORPUS, progress=steps.append)
            assert isinstance(report, IngestReport)
            assert report.ingested == len(CORPUS) and report.qa_pairs > 0 and report.failures == []
            assert sum(steps) == len(CORPUS)
            asked = {key: remote.ask(key[1], strategy=key[0], budget=key[2]) for key in ASKS}
            assert all(isinstance(result, AskResult) for result in asked.values())
            assert asked["chain", TWO_HOP, None].answer == "G. Stanley Hall"
            assert asked["chain", ONE_HOP, None].chains, "chain details are rebuilt as chains"
            assert all(asked[s, ONE_HOP, 32].evidence_tokens <= 32 for s in ("chain", "dense"))
            documents = remote.documents()
            assert len(documents) == len(CORPUS) and remote.documents(limit=2) == documents[:2]
            assert remote.documents(status="failed") == []
            stats = remote.stats()
            assert stats["documents_done"] == len(CORPUS)
        assert server.stop() == 0

        with connect(server.url, token=server.token, namespace=namespace) as remote:
            with pytest.raises(ServerError, match="cannot reach"):
                remote.stats()
            with pytest.raises(ServerError):
                remote.ask(ONE_HOP)

        with Memory(namespace=namespace, settings=home_settings) as memory:
            for (strategy, question, budget), remote_result in asked.items():
                local = memory.ask(question, strategy=strategy, budget=budget)
                assert remote_result.answer == local.answer
                assert [e.text for e in remote_result.evidence] == [e.text for e in local.evidence]
                assert comparable(remote_result) == comparable(local)
            assert [d["id"] for d in documents] == [d["id"] for d in memory.documents()]
            assert stats == memory.stats()

        server = start_server(home_settings, tmp_path)
        with connect(server.url, token=server.token, namespace=namespace) as remote:
            ids = [d["id"] for d in documents]
            first = remote.delete(ids[0])
            assert isinstance(first, DeleteReport) and first.doc_id == ids[0]
            with pytest.raises(InputError, match="none of the"):
                remote.delete_many([ids[1], "no-such-document"])
            assert [r.doc_id for r in remote.delete_many(ids[1:])] == ids[1:]
            after = remote.stats()
            assert after["documents"] == 0 and after["qa_vectors"] == 0
            assert remote.documents() == []
    finally:
        server.stop()


# --------------------------------------------------------------------------- errors


def test_a_wrong_or_missing_token_is_a_server_error(served: Served) -> None:
    for token in ("wrong-token", ""):
        with connect(served.url, token=token) as remote, pytest.raises(ServerError, match="token") as caught:
            remote.stats()
        assert caught.value.status == 401


def test_what_the_caller_got_wrong_is_an_input_error_with_the_servers_message(served: Served) -> None:
    namespace = f"ce{uuid.uuid4().hex[:10]}"
    with connect(served.url, token=served.token, namespace=namespace) as remote:
        with pytest.raises(InputError, match="holds no documents"):
            remote.ask(ONE_HOP)
        remote.ingest("Hank Snow died in Madison, Tennessee.")
        with pytest.raises(InputError, match="no-such-strategy"):
            remote.ask(ONE_HOP, strategy="no-such-strategy")
        with pytest.raises(InputError, match="beam_widht"):
            remote.ask(ONE_HOP, beam_widht=3)
        with pytest.raises(InputError):
            remote.ask(ONE_HOP, budget=1)  # below the server's minimum
        with pytest.raises(InputError, match="unknown document status"):
            remote.documents(status="lost")
        with pytest.raises(InputError, match="no document 'missing'"):
            remote.delete("missing")
        with pytest.raises(InputError):
            remote.ingest({"title": "no text"})
        with pytest.raises(InputError, match="cannot send"):
            remote.ingest(42)
        assert remote.stats()["documents"] == 1


def test_a_server_that_is_not_there_is_a_server_error() -> None:
    with connect("http://127.0.0.1:1", token="t", connect_timeout=2) as remote:
        with pytest.raises(ServerError, match="is `engramdb serve` running"):
            remote.documents()


def test_the_retrievers_take_a_connected_client_as_their_memory(served: Served) -> None:
    """Agents built on LangChain or LlamaIndex reach a served memory the same way as a local one."""
    from engramdb.retrieval.integrations.langchain import EngramRetriever
    from engramdb.retrieval.integrations.llamaindex import EngramLlamaIndexRetriever

    namespace = f"cr{uuid.uuid4().hex[:10]}"
    with connect(served.url, token=served.token, namespace=namespace) as remote:
        remote.ingest(CORPUS)
        expected = [e.text for e in remote.ask(ONE_HOP, strategy="dense", budget=128).evidence]
        assert len(expected) > 2  # so k=2 really cuts
        documents = EngramRetriever(memory=remote, strategy="dense", budget=128, k=2).invoke(ONE_HOP)
        assert [d.page_content for d in documents] == expected[:2]
        nodes = EngramLlamaIndexRetriever(remote, strategy="dense", similarity_top_k=2, budget=128).retrieve(
            ONE_HOP
        )
        assert [n.node.get_content() for n in nodes] == expected[:2]

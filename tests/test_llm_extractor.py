"""The LLM extraction path, with langchain-core fake chat models at the network boundary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel, FakeMessagesListChatModel
from langchain_core.messages import AIMessage

from engramdb.ingestion.documents import make_document
from engramdb.ingestion.extraction.cache import ExtractionCache
from engramdb.ingestion.extraction.extractors import ChunkJob
from engramdb.ingestion.extraction.llm import LLMExtractor
from engramdb.ingestion.extraction.offline import ChunkText
from engramdb.ingestion.gsw import GSW
from engramdb.ingestion.pipeline import Ingestor
from engramdb.platform.llm import parse_json_reply

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "llm_gsw_journal.json").read_text())
PASSAGE = FIXTURE["passage"]
RECORDED = AIMessage(content=FIXTURE["reply"], usage_metadata=FIXTURE["usage"])
EXPECTED = GSW.model_validate(parse_json_reply(FIXTURE["reply"]))


def _job() -> ChunkJob:
    return ChunkJob(ChunkText(PASSAGE["text"], PASSAGE["title"]), "journal")


def _ingestor(memory, model, **kwargs) -> Ingestor:
    extractor = LLMExtractor(model, namespace=memory.namespace, concurrency=1, **kwargs)
    return Ingestor(memory.graph, memory.vectors, memory.embedder, extractor)


def test_recorded_gsw_is_stored_exactly(memory, driver) -> None:
    ingestor = _ingestor(memory, FakeMessagesListChatModel(responses=[RECORDED]))
    doc = make_document(PASSAGE["text"], title=PASSAGE["title"], id="journal")
    report = ingestor.ingest([doc])
    assert report.ingested == 1 and report.failed == 0
    assert (report.input_tokens, report.output_tokens) == (812, 1104)

    records, _, _ = driver.execute_query(
        "MATCH (v:VerbPhrase {namespace: $ns})-[q:QA]->(a:Entity) "
        "RETURN v.text AS vp, q.question AS question, a.name AS answer",
        ns=memory.namespace,
    )
    stored = sorted((r["vp"], r["question"], r["answer"]) for r in records)
    names = {e.id: e.name for e in EXPECTED.entities}
    vps = {v.id: v.text for v in EXPECTED.verb_phrases}
    expected = sorted(
        (vps[q.verb_phrase_id], q.question, names[a]) for q in EXPECTED.qa_pairs for a in q.answer_entity_ids
    )
    assert stored == expected
    entities, _, _ = driver.execute_query(
        "MATCH (e:Entity {namespace: $ns}) RETURN e.name AS name, e.type AS type, e.roles AS roles, "
        "e.states AS states",
        ns=memory.namespace,
    )
    got = {r["name"]: (r["type"], sorted(r["roles"]), sorted(r["states"])) for r in entities}
    want = {
        e.name: (e.type, sorted({r.role for r in e.roles}), sorted({s for r in e.roles for s in r.states}))
        for e in EXPECTED.entities
    }
    assert got == want
    assert memory.vectors.count("qa", memory.namespace) == len(EXPECTED.qa_pairs)


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ('{"entities": [ {"id": "e1", "name": ', "JSON is cut off"),  # far below the cap: retried, not split
        (
            '{"entities": [{"id": "e1", "name": "X"}], "verb_phrases": [], "qa_pairs": []}',
            "is in no usable question",
        ),
        ('{"answer": "Hank Snow"}', "none of the keys entities, verb_phrases, qa_pairs"),
        ("Sorry, I cannot help with that.", "no JSON object"),
        ("", "empty reply"),
    ],
)
def test_bad_output_becomes_a_recorded_failure(memory, driver, reply: str, reason: str) -> None:
    model = FakeListChatModel(responses=[reply, reply])  # the retry gets the same bad output
    ingestor = _ingestor(memory, model)
    doc = make_document(PASSAGE["text"], title=PASSAGE["title"], id="journal")
    report = ingestor.ingest([doc])
    assert report.failed == 1 and report.ingested == 0
    assert reason in report.failures[0][1] and "after 2 attempts" in report.failures[0][1]
    status = memory.document_status(["journal"])["journal"]
    assert status["status"] == "failed" and reason in status["error"]

    ns = memory.namespace
    rows, _, _ = driver.execute_query(
        "MATCH (d:Document {namespace: $ns, id: 'journal'})-[:HAS_CHUNK]->(c:Chunk) "
        "RETURN d.status AS status, d.error AS derror, c.status AS cstatus, c.error AS cerror",
        ns=ns,
    )
    assert rows[0]["status"] == "failed" and rows[0]["cstatus"] == "failed"
    assert reason in rows[0]["cerror"] and reason in rows[0]["derror"]
    for label in ("Entity", "VerbPhrase"):
        assert (
            driver.execute_query(f"MATCH (n:{label} {{namespace: $ns}}) RETURN count(n)", ns=ns).records[0][0]
            == 0
        )
    assert (
        driver.execute_query("MATCH ()-[q:QA {namespace: $ns}]->() RETURN count(q)", ns=ns).records[0][0] == 0
    )
    assert memory.vectors.count("qa", ns) == 0


def test_bad_reply_is_retried_with_the_reason(memory) -> None:
    model = FakeMessagesListChatModel(responses=[AIMessage(content="not json at all"), RECORDED])
    extractor = LLMExtractor(model, namespace=memory.namespace, concurrency=1)
    result = extractor.extract_one(_job())
    assert result.error is None and result.gsw == EXPECTED


def test_failed_document_is_retried_on_the_next_ingest(memory) -> None:
    doc = make_document(PASSAGE["text"], title=PASSAGE["title"], id="journal")
    _ingestor(memory, FakeListChatModel(responses=["", ""])).ingest([doc])
    report = _ingestor(memory, FakeMessagesListChatModel(responses=[RECORDED])).ingest([doc])
    assert report.ingested == 1
    assert memory.stats()["documents_failed"] == 0
    assert memory.stats()["qa_pairs"] == len(EXPECTED.qa_pairs)


def test_cache_avoids_a_second_call_and_delete_clears_it(tmp_path: Path) -> None:
    cache = ExtractionCache(tmp_path / "cache.sqlite")
    model = FakeMessagesListChatModel(responses=[RECORDED, AIMessage(content="a second call was made")])
    extractor = LLMExtractor(model, namespace="ns", cache=cache, concurrency=1)
    first = extractor.extract_one(_job())
    second = extractor.extract_one(_job())
    assert second.cached and second.gsw == first.gsw == EXPECTED
    assert model.i == 1  # only one call reached the model
    assert cache.count("ns") == 1
    assert cache.delete_document("ns", "journal") == 1 and cache.count("ns") == 0


def test_repair_pass_keeps_the_first_result_when_the_repair_is_bad() -> None:
    model = FakeMessagesListChatModel(responses=[RECORDED, AIMessage(content="{"), AIMessage(content="{")])
    extractor = LLMExtractor(model, namespace="ns", concurrency=1, repair_pass=True)
    result = extractor.extract_one(_job())
    assert result.gsw == EXPECTED and result.error is None

"""The LLM path against the ways real models and providers misbehave (issue 14, defects 3-13).

Every model here is a langchain-core fake chat model at the network boundary: the
stock fakes, or small BaseChatModel subclasses that pick the recorded-style reply
for the passage in the request, raise the provider-shaped errors real SDKs raise
(HTTP 429, timeouts), or answer through tool calls like a provider with
structured output.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import FakeListChatModel, FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from engramdb.ingestion.documents import make_document
from engramdb.ingestion.extraction.extractors import ChunkJob
from engramdb.ingestion.extraction.llm import PROMPT_VERSION, SYSTEM_PROMPT, LLMExtractor, split_in_two
from engramdb.ingestion.extraction.offline import ChunkText, OfflineExtractor
from engramdb.ingestion.gsw import GSW, self_answering
from engramdb.ingestion.pipeline import Ingestor
from engramdb.platform.errors import LLMError
from engramdb.platform.llm import RetryPolicy
from engramdb.retrieval.answering import ANSWER_PROMPT, NA, LLMAnswerer, OfflineAnswerer
from engramdb.retrieval.decomposition import (
    DecompositionError,
    LLMDecomposer,
    OfflineDecomposer,
    normalize_placeholders,
)
from engramdb.retrieval.results import Chain, ChainStep, Evidence, QACandidate, qa_evidence

FAST = RetryPolicy(attempts=3, initial_wait=0.001, max_wait=0.002)  # backoff without waiting in tests
SAMPLE_CORPUS = Path(__file__).resolve().parents[1] / "ingestion" / "sample_corpus.json"

TITLE = "Virus (Iron Maiden song)"
PASSAGE = (
    "Virus is a single by Iron Maiden, released in 1996. Blaze Bayley performed Virus in his solo career."
)
BASE_REPLY: dict[str, Any] = {
    "entities": [
        {"id": "e1", "name": "Virus", "type": "WORK", "roles": [{"role": "single", "states": []}],
         "aliases": ["Virus (Iron Maiden song)"]},
        {"id": "e2", "name": "Iron Maiden", "type": "ORG", "roles": [{"role": "band", "states": []}], "aliases": []},
        {"id": "e3", "name": "1996", "type": "DATE", "roles": [{"role": "release year", "states": []}],
         "aliases": []},
        {"id": "e4", "name": "Blaze Bayley", "type": "PERSON",
         "roles": [{"role": "solo performer", "states": ["former Iron Maiden singer"]}], "aliases": []},
    ],
    "verb_phrases": [{"id": "v1", "text": "is a single by"}, {"id": "v2", "text": "was released in"},
                     {"id": "v3", "text": "performed"}],
    "qa_pairs": [
        {"id": "q1", "verb_phrase_id": "v1", "question": "Which band released the single Virus?",
         "question_entity_ids": ["e1"], "answer_entity_ids": ["e2"]},
        {"id": "q2", "verb_phrase_id": "v1", "question": "Which single is by Iron Maiden?",
         "question_entity_ids": ["e2"], "answer_entity_ids": ["e1"]},
        {"id": "q3", "verb_phrase_id": "v2", "question": "When was Virus released?",
         "question_entity_ids": ["e1"], "answer_entity_ids": ["e3"]},
        {"id": "q4", "verb_phrase_id": "v2", "question": "Which Iron Maiden single was released in 1996?",
         "question_entity_ids": ["e2", "e3"], "answer_entity_ids": ["e1"]},
        {"id": "q5", "verb_phrase_id": "v3", "question": "Who performed Virus in his solo career?",
         "question_entity_ids": ["e1"], "answer_entity_ids": ["e4"]},
        {"id": "q6", "verb_phrase_id": "v3", "question": "Which song did Blaze Bayley perform in his solo career?",
         "question_entity_ids": ["e4"], "answer_entity_ids": ["e1"]},
    ],
}  # fmt: skip


def reply_data() -> dict[str, Any]:
    return copy.deepcopy(BASE_REPLY)


def as_text(data: Any) -> str:
    return json.dumps(data, indent=1)


def passage_of(messages: list[BaseMessage]) -> str:
    first = next(m for m in messages if isinstance(m, HumanMessage))
    return str(first.content).split("Passage:\n", 1)[1]


class PassageChatModel(BaseChatModel):
    """Replies by the passage in the request; each queue is consumed in order and its last item repeats.

    An item that is an exception is raised instead (the provider failing). ``calls`` and ``caps`` record
    every request and the output cap in force (``max_tokens``, set through the extractor's cap).
    """

    replies: dict[str, list[Any]]
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    caps: list[int | None] = Field(default_factory=list)
    max_tokens: int | None = None

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ):
        self.calls.append(list(messages))
        self.caps.append(self.max_tokens)
        queue = self.replies[passage_of(messages)]
        item = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(item, BaseException):
            raise item
        message = item if isinstance(item, AIMessage) else AIMessage(content=item)
        return ChatResult(generations=[ChatGeneration(message=message)])

    @property
    def _llm_type(self) -> str:
        return "passage-fake"


class ToolCallingChatModel(PassageChatModel):
    """A provider with tool calling: ``with_structured_output`` binds the schema as a forced tool."""

    bound: list[Any] = Field(default_factory=list)
    refuse_tools: bool = False

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kwargs: Any):
        self.bound.append((tools, tool_choice))
        return self.bind(tools=tools, tool_choice=tool_choice, **kwargs)

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ):
        if self.refuse_tools and kwargs.get("tools"):
            self.calls.append(list(messages))
            raise BadRequestError("this model does not support tools")
        return super()._generate(messages, stop, run_manager, **kwargs)


class RecordingChatModel(FakeMessagesListChatModel):
    """FakeMessagesListChatModel that remembers the messages of every call."""

    calls: list[list[BaseMessage]] = Field(default_factory=list)

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ):
        self.calls.append(list(messages))
        return super()._generate(messages, stop, run_manager, **kwargs)


class FlakyChatModel(RecordingChatModel):
    """Raises the queued provider errors first, then replies."""

    failures: list[Any] = Field(default_factory=list)

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ):
        if self.failures:
            self.calls.append(list(messages))
            raise self.failures.pop(0)
        return super()._generate(messages, stop, run_manager, **kwargs)


class RateLimitError(Exception):
    """Shaped like the OpenAI / Anthropic SDK error for HTTP 429."""

    status_code = 429


class APITimeoutError(Exception):
    """Shaped like the SDKs' request timeout (no HTTP status)."""


class AuthenticationError(Exception):
    status_code = 401


class BadRequestError(Exception):
    status_code = 400


def extractor(model: BaseChatModel, **kwargs: Any) -> LLMExtractor:
    return LLMExtractor(model, namespace="ns", concurrency=1, retry_policy=FAST, **kwargs)


def job(text: str = PASSAGE, title: str = TITLE) -> ChunkJob:
    return ChunkJob(ChunkText(text, title), "virus")


def qa_texts(gsw: GSW) -> dict[str, set[str]]:
    names = {e.id: e.name for e in gsw.entities}
    return {q.question: {names[a] for a in q.answer_entity_ids} for q in gsw.qa_pairs}


# --------------------------------------------------------------------------- 3: titles and "known as"


def test_prompt_v2_no_longer_asks_for_known_as_questions() -> None:
    assert PROMPT_VERSION == "gsw-extract-v2"
    assert "known as" in SYSTEM_PROMPT and "write no" in SYSTEM_PROMPT  # aliases, never "known as" questions
    assert PROMPT_VERSION in extractor(FakeListChatModel(responses=["{}"])).name  # so caches miss old replies


def test_known_as_pairs_from_a_title_entity_are_dropped_and_the_title_kept() -> None:
    data = reply_data()
    data["entities"].append({"id": "e5", "name": "Virus (Iron Maiden song)", "type": "WORK",
                             "roles": [{"role": "document title", "states": []}], "aliases": []})  # fmt: skip
    data["verb_phrases"].append({"id": "v4", "text": "known as"})
    data["qa_pairs"] += [
        {"id": "q7", "verb_phrase_id": "v4", "question": "What is Virus (Iron Maiden song) known as?",
         "question_entity_ids": ["e5"], "answer_entity_ids": ["e1"]},
        {"id": "q8", "verb_phrase_id": "v4", "question": "Under what title is Virus known?",
         "question_entity_ids": ["e1"], "answer_entity_ids": ["e5"]},
        {"id": "q9", "verb_phrase_id": "v1", "question": "What is Virus?",
         "question_entity_ids": ["e1"], "answer_entity_ids": ["e1", "e2"]},
    ]  # fmt: skip
    result = extractor(FakeListChatModel(responses=[as_text(data)])).extract_one(job())
    gsw = result.gsw
    assert result.error is None and gsw is not None
    for qa in gsw.qa_pairs:
        named = [gsw.entity(e) for e in qa.question_entity_ids]
        assert all(self_answering(named, gsw.entity(a)) is None for a in qa.answer_entity_ids), qa.question
    questions = qa_texts(gsw)
    assert "What is Virus (Iron Maiden song) known as?" not in questions
    assert "Under what title is Virus known?" not in questions
    assert questions["What is Virus?"] == {"Iron Maiden"}  # the self-answer removed, the real one kept
    virus = next(e for e in gsw.entities if e.name == "Virus")
    assert "Virus (Iron Maiden song)" in virus.aliases
    assert {r.role for r in virus.roles} == {"single", "document title"}  # the title entity's role survives
    assert len(gsw.entities) == 4
    reasons = [d.reason for d in gsw.dropped]
    assert sum("self-answering" in r for r in reasons) == 3


def test_offline_extractor_has_no_self_answering_known_as_pairs() -> None:
    corpus = json.loads(SAMPLE_CORPUS.read_text())
    chunks = [ChunkText(d["text"], d["title"]) for d in corpus]
    maiden = ChunkText('Maiden Japan, also known as "Heavy Metal Army", is a live EP by the British heavy metal '
                       "band Iron Maiden.", "Maiden Japan")  # fmt: skip
    gsws = OfflineExtractor().extract_many([*chunks, maiden])
    checked = 0
    for gsw in gsws:
        for qa in gsw.qa_pairs:
            named = [gsw.entity(e) for e in qa.question_entity_ids]
            for answer in qa.answer_entity_ids:
                checked += 1
                assert self_answering(named, gsw.entity(answer)) is None, qa.question
            assert "known as" not in qa.question.lower(), qa.question
    assert checked > 300
    japan = next(e for e in gsws[-1].entities if e.name == "Maiden Japan")
    assert "Heavy Metal Army" in japan.aliases  # the other name is kept, as an alias


# --------------------------------------------------------------------------- 4: the content rules


def test_rule_breaking_pairs_are_dropped_and_recorded_not_the_chunk() -> None:
    data = reply_data()
    data["entities"][0]["type"] = "Song"  # a synonym of WORK
    data["entities"].append({"id": "e5", "name": "England", "type": "NATION", "roles": [], "aliases": []})
    data["verb_phrases"].append({"id": "v4", "text": "is from"})
    data["qa_pairs"] += [
        {"id": "q7", "verb_phrase_id": "v4", "question": "Where is Iron Maiden from?",
         "question_entity_ids": ["e2"], "answer_entity_ids": ["e5"]},
        {"id": "q8", "verb_phrase_id": "v2", "question": "When was it released?",
         "question_entity_ids": [], "answer_entity_ids": ["e3"]},
        {"id": "q9", "verb_phrase_id": "v1", "question": "Which band is Iron Maiden?",
         "question_entity_ids": ["e2"], "answer_entity_ids": ["e2"]},
        {"id": "q10", "verb_phrase_id": "v9", "question": "Who produced Virus?",
         "question_entity_ids": ["e1"], "answer_entity_ids": ["e2"]},
    ]  # fmt: skip
    result = extractor(FakeListChatModel(responses=[as_text(data)])).extract_one(job())
    gsw = result.gsw
    assert result.error is None and gsw is not None and result.attempts == 1
    assert {q.id for q in gsw.qa_pairs} == {"q1", "q2", "q3", "q4", "q5", "q6", "q7"}
    assert gsw.entity("e1").type == "WORK" and gsw.entity("e5").type == "THING"
    dropped = {(d.kind, d.id): d.reason for d in gsw.dropped}
    assert "'it'" in dropped[("qa_pair", "q8")]
    assert "self-answering" in dropped[("qa_pair", "q9")]
    assert "unknown verb phrase 'v9'" in dropped[("qa_pair", "q10")]
    assert "'NATION'" in dropped[("type", "e5")] and "'SONG'" in dropped[("type", "e1")]
    assert len(result.dropped) == 5


# --------------------------------------------------------------------------- 5: tolerant reading


def _extra_keys(data: dict[str, Any]) -> dict[str, Any]:
    data["title"] = TITLE
    data["entities"][0]["description"] = "a 1996 single"
    data["qa_pairs"][0]["participants"] = ["Virus", "Iron Maiden"]
    return data


def _states_null(data: dict[str, Any]) -> dict[str, Any]:
    data["entities"][0]["roles"] = [{"role": "single", "states": None}]
    data["entities"][1]["aliases"] = None
    return data


def _roles_as_strings(data: dict[str, Any]) -> dict[str, Any]:
    data["entities"][0]["roles"] = ["single", "song"]
    data["entities"][2]["roles"] = "release year"
    return data


@pytest.mark.parametrize(
    ("shape", "reply"),
    [
        ("prose before", "Here is the JSON:\n" + as_text(reply_data())),
        ("trailing note", as_text(reply_data()) + "\n\nNote: 1996 is the release year, kept as a DATE."),
        (
            "fence and prose",
            "Sure.\n```json\n" + as_text(reply_data()) + "\n```\nLet me know if you need more.",
        ),
        ("extra keys", as_text(_extra_keys(reply_data()))),
        ("states null", as_text(_states_null(reply_data()))),
        ("roles as strings", as_text(_roles_as_strings(reply_data()))),
    ],
)
def test_real_reply_shapes_are_accepted_first_time(shape: str, reply: str) -> None:
    result = extractor(FakeListChatModel(responses=[reply])).extract_one(job())
    gsw = result.gsw
    assert result.error is None and gsw is not None, shape
    assert result.attempts == 1 and len(gsw.qa_pairs) == 6 and not gsw.dropped
    virus = gsw.entity("e1")
    if shape == "extra keys":
        assert gsw.ignored_keys == {"title": 1, "entities.description": 1, "qa_pairs.participants": 1}
        assert result.ignored_key_count == 3
    if shape == "states null":
        assert [(r.role, r.states) for r in virus.roles] == [("single", [])] and gsw.entity(
            "e2"
        ).aliases == []
    if shape == "roles as strings":
        assert [(r.role, r.states) for r in virus.roles] == [("single", []), ("song", [])]
        assert [r.role for r in gsw.entity("e3").roles] == ["release year"]


def test_structured_output_is_used_when_the_provider_supports_it() -> None:
    data = _extra_keys(reply_data())
    call = {"name": "semantic_workspace", "args": data, "id": "call_1", "type": "tool_call"}
    model = ToolCallingChatModel(replies={PASSAGE: [AIMessage(content="", tool_calls=[call])]})
    result = extractor(model).extract_one(job())
    assert result.error is None and result.structured and result.gsw is not None
    assert len(result.gsw.qa_pairs) == 6 and result.gsw.ignored_keys["entities.description"] == 1
    tools, choice = model.bound[0]
    assert tools[0]["title"] == "semantic_workspace" and choice == "any"


def test_structured_output_refused_by_the_provider_falls_back_to_json_text() -> None:
    model = ToolCallingChatModel(replies={PASSAGE: [as_text(reply_data())]}, refuse_tools=True)
    ex = extractor(model)
    result = ex.extract_one(job())
    assert result.error is None and not result.structured and len(result.gsw.qa_pairs) == 6
    assert len(model.calls) == 2 and not ex.structured  # one refused call, then plain JSON from then on


def test_models_without_structured_output_use_plain_json() -> None:
    result = extractor(FakeListChatModel(responses=[as_text(reply_data())])).extract_one(job())
    assert result.error is None and not result.structured


# --------------------------------------------------------------------------- 6: every error in one retry


def test_retry_message_lists_every_problem_at_once() -> None:
    broken = {
        "entities": [{"id": "e1", "type": "WORK"}, "Iron Maiden"],
        "verb_phrases": [{"id": "v1"}],
        "qa_pairs": [{"id": "q1", "verb_phrase_id": "v9", "question": "Who released Virus?",
                      "question_entity_ids": ["e1"], "answer_entity_ids": ["e2"]}],
    }  # fmt: skip
    model = PassageChatModel(replies={PASSAGE: [as_text(broken), as_text(reply_data())]})
    result = extractor(model).extract_one(job())
    assert result.error is None and result.attempts == 2 and len(result.gsw.qa_pairs) == 6
    retry = model.calls[1][-1].content
    assert "(4 problems)" in retry
    for problem in ("entity 1 (e1): name: Field required", "entity 2 is a JSON string",
                    "verb phrase 1 (v1): text: Field required", "unknown verb phrase 'v9'"):  # fmt: skip
        assert problem in retry


def test_still_unusable_after_the_retry_fails_with_every_reason() -> None:
    broken = {"entities": "none found", "verb_phrases": [], "qa_pairs": [{"id": "q1"}]}
    result = extractor(FakeListChatModel(responses=[as_text(broken)])).extract_one(job())
    assert result.gsw is None and result.attempts == 2
    assert "after 2 attempts" in result.error
    assert "'entities' must be a list, got a JSON string" in result.error
    assert "verb_phrase_id: Field required" in result.error and "question: Field required" in result.error


# --------------------------------------------------------------------------- 7: provider errors


@pytest.mark.parametrize(
    "error",
    [
        RateLimitError("Rate limit reached, retry in 1s"),
        APITimeoutError("Request timed out."),
        TimeoutError(),
    ],
)
def test_transient_provider_errors_are_retried(error: Exception) -> None:
    model = FlakyChatModel(responses=[AIMessage(content=as_text(reply_data()))], failures=[error, error])
    result = extractor(model).extract_one(job())
    assert result.error is None and len(result.gsw.qa_pairs) == 6
    assert len(model.calls) == 3


def test_persistent_rate_limit_becomes_a_recorded_chunk_failure(memory) -> None:
    model = FlakyChatModel(
        responses=[AIMessage(content="{}")], failures=[RateLimitError("quota exceeded")] * 3
    )
    ingestor = Ingestor(memory.graph, memory.vectors, memory.embedder, extractor(model))
    report = ingestor.ingest([make_document(PASSAGE, title=TITLE, id="virus")])
    assert report.failed == 1 and len(model.calls) == 3
    reason = report.failures[0][1]
    assert "extraction call failed after 3 attempts: RateLimitError (HTTP 429): quota exceeded" in reason
    assert memory.document_status(["virus"])["virus"]["status"] == "failed"


def test_non_transient_provider_error_is_not_retried() -> None:
    model = FlakyChatModel(
        responses=[AIMessage(content="{}")], failures=[AuthenticationError("invalid api key")]
    )
    result = extractor(model).extract_one(job())
    assert result.gsw is None and len(model.calls) == 1
    assert "AuthenticationError (HTTP 401): invalid api key" in result.error


def test_ask_time_provider_errors_raise_a_clear_error_or_fall_back_and_say_so() -> None:
    question = (
        "Who was the first president of the association that published Journal of Psychotherapy Integration?"
    )

    def failing() -> FlakyChatModel:
        return FlakyChatModel(responses=[AIMessage(content="{}")], failures=[RateLimitError("slow down")] * 3)

    with pytest.raises(
        LLMError, match=r"decomposition call failed after 3 attempts: RateLimitError \(HTTP 429\)"
    ):
        LLMDecomposer(failing(), retry_policy=FAST).decompose(question)
    fallback = LLMDecomposer(failing(), retry_policy=FAST, fallback=OfflineDecomposer()).decompose(question)
    assert fallback.source.startswith("offline-fallback: decomposition call failed after 3 attempts")
    assert fallback.sequences == OfflineDecomposer().decompose(question).sequences

    chain, evidence = _chain("Who founded Fox Film?", "William Fox", 0.9)
    with pytest.raises(LLMError, match="answer call failed after 3 attempts"):
        LLMAnswerer(failing(), retry_policy=FAST).answer("Who founded Fox Film?", [chain], evidence)
    answer = LLMAnswerer(failing(), retry_policy=FAST, fallback=OfflineAnswerer()).answer(
        "Who founded Fox Film?", [chain], evidence
    )
    assert answer.text == "William Fox" and answer.source.startswith("offline-fallback: answer call failed")


# --------------------------------------------------------------------------- 8: honest decomposition source


def test_flat_list_decomposition_is_one_sequence_from_the_llm() -> None:
    reply = '["What company published Journal of Psychotherapy Integration?", "Who was the first president of #1?"]'
    dec = LLMDecomposer(FakeListChatModel(responses=[reply]), fallback=OfflineDecomposer()).decompose(
        "Who ...?"
    )
    assert dec.source == "llm"
    assert dec.sequences == (("What company published Journal of Psychotherapy Integration?",
                              "Who was the first president of <ENTITY_Q1>?"),)  # fmt: skip


def test_unusable_decomposition_falls_back_with_the_reason_in_the_source() -> None:
    question = "Who is the spouse of the director of Big Eyes?"
    model = RecordingChatModel(responses=[AIMessage(content="sure! here are the steps")])
    dec = LLMDecomposer(model, fallback=OfflineDecomposer()).decompose(question)
    assert dec.source.startswith("offline-fallback: unusable LLM decomposition after 2 attempt(s)")
    assert "no JSON object" in dec.source
    assert dec.sequences == OfflineDecomposer().decompose(question).sequences
    assert len(model.calls) == 2 and "no JSON object" in model.calls[1][-1].content
    with pytest.raises(DecompositionError, match="no JSON object"):
        LLMDecomposer(FakeListChatModel(responses=["sure! here are the steps"])).decompose(question)


# --------------------------------------------------------------------------- 9: placeholders


@pytest.mark.parametrize(
    "written", ["#1", "# 1", "<Q1>", "[answer of Q1]", "{Q1}", "{{Q1}}", "<answer 1>", "<ENTITY_1>",
                "[Answer to question 1]", "(answer from step 1)", "ENTITY_Q1", "[Q1's answer]", "<answer_1>"],
)  # fmt: skip
def test_common_placeholder_spellings_become_the_internal_one(written: str) -> None:
    reply = json.dumps({"sequences": [["Who directed Big Eyes?", f"Who is the spouse of {written}?"]]})
    dec = LLMDecomposer(FakeListChatModel(responses=[reply])).decompose(
        "Who is the spouse of the director of Big Eyes?"
    )
    assert dec.sequences[0][1] == "Who is the spouse of <ENTITY_Q1>?"
    assert dec.placeholders(0, 1) == [1]


def test_a_hash_number_that_is_no_reference_stays_text() -> None:
    assert (
        normalize_placeholders("Which #1 single did Madonna release?", 1)
        == "Which #1 single did Madonna release?"
    )
    assert normalize_placeholders("Who sang #1?", 2) == "Who sang <ENTITY_Q1>?"


def test_unrecognised_reference_is_rejected_in_the_retry() -> None:
    bad = '{"sequences": [["Who directed Big Eyes?", "Who is the spouse of [the answer above]?"]]}'
    good = '{"sequences": [["Who directed Big Eyes?", "Who is the spouse of <ENTITY_Q1>?"]]}'
    model = RecordingChatModel(responses=[AIMessage(content=bad), AIMessage(content=good)])
    dec = LLMDecomposer(model).decompose("Who is the spouse of the director of Big Eyes?")
    assert dec.source == "llm" and dec.sequences[0][1] == "Who is the spouse of <ENTITY_Q1>?"
    assert "is not a placeholder" in model.calls[1][-1].content


# --------------------------------------------------------------------------- 10: answers, refusals


def _chain(question: str, answer: str, score: float) -> tuple[Chain, list[Evidence]]:
    qa = QACandidate(qa_id=f"qa-{answer}", question=question, answer_ids=(f"ent-{answer}",), answer_names=(answer,),
                     answer_types=("PERSON",), question_entity_ids=(), doc_id="d", chunk_id="d#0")  # fmt: skip
    step = ChainStep(question, qa, f"ent-{answer}", answer, score)
    evidence = Evidence(
        kind="qa_pair", id=qa.qa_id, text=qa.text, score=score, doc_id="d", chunk_ids=("d#0",)
    )
    return Chain(steps=(step,), score=score), [evidence]


@pytest.mark.parametrize(
    ("reply", "expected", "supported"),
    [
        ("N/A - the evidence does not mention a spouse.", NA, False),
        ("Not stated in the evidence.", NA, False),
        ("I cannot answer from the evidence.", NA, False),
        ("**Leyton**", "Leyton", None),
        ("The answer is Leyton.", "Leyton", None),
        ('{"answer": "Leyton", "supported": true}', "Leyton", True),
        ('Here is my answer:\n```json\n{"answer": "**Leyton**", "supported": true}\n```', "Leyton", True),
        ('{"answer": "Leyton", "supported": false}', NA, False),
        ('{"answer": null, "supported": false}', NA, False),
        ('{"answer": "Not stated in the evidence", "supported": true}', NA, False),
    ],
)
def test_answers_are_read_and_refusals_become_na(reply: str, expected: str, supported: bool | None) -> None:
    chain, evidence = _chain("Who was the spouse of Leyton?", "Leyton", 0.9)
    answer = LLMAnswerer(FakeListChatModel(responses=[reply])).answer("Where?", [chain], evidence)
    assert (answer.text, answer.supported, answer.source) == (expected, supported, "llm")


def test_answer_prompt_asks_for_a_structured_answer() -> None:
    assert '"answer"' in ANSWER_PROMPT and '"supported"' in ANSWER_PROMPT


# --------------------------------------------------------------------------- 11: evidence floor


def test_once_the_floor_is_met_the_reader_sees_every_item_in_order() -> None:
    """The floor decides whether to ask; it never hides the weaker hop of a chain from the reader."""
    director = QACandidate(qa_id="qa-dir", question="Who directed Jump for Glory?", answer_ids=("ent-rw",),
                           answer_names=("Raoul Walsh",), answer_types=("PERSON",), question_entity_ids=(),
                           doc_id="d1", chunk_id="d1#0")  # fmt: skip
    spouse = QACandidate(qa_id="qa-sp", question="Who was Raoul Walsh's wife?", answer_ids=("ent-mw",),
                         answer_names=("Miriam Cooper",), answer_types=("PERSON",), question_entity_ids=("ent-rw",),
                         doc_id="d2", chunk_id="d2#0")  # fmt: skip
    chain = Chain(steps=(ChainStep(director.question, director, "ent-rw", "Raoul Walsh", 0.21, hop=1),
                         ChainStep(spouse.question, spouse, "ent-mw", "Miriam Cooper", 0.83, hop=2)), score=0.42)  # fmt: skip
    evidence = [qa_evidence(director, 0.21), qa_evidence(spouse, 0.83)]
    _noise_chain, noise = _chain("Who wrote Maiden Japan?", "Steve Harris", 0.16)
    model = RecordingChatModel(
        responses=[AIMessage(content='{"answer": "Miriam Cooper", "supported": true}')]
    )
    answer = LLMAnswerer(model, evidence_floor=0.5).answer(
        "Who is the spouse of the director of Jump for Glory?", [chain], [*evidence, *noise]
    )
    assert answer.text == "Miriam Cooper" and answer.evidence_count == 3
    prompt = model.calls[0][-1].content
    # the hop under the floor reaches the reader, and the chain reads in its order, noise last
    assert prompt.index("Raoul Walsh") < prompt.index("Miriam Cooper") < prompt.index("Steve Harris")


def test_no_evidence_above_the_floor_is_na_without_a_call() -> None:
    chain, noise = _chain("Who wrote Maiden Japan?", "Steve Harris", 0.16)
    model = RecordingChatModel(responses=[AIMessage(content="Steve Harris")])
    answer = LLMAnswerer(model).answer("Who founded Fox Film?", [chain], noise)
    assert answer.text == NA and not model.calls
    assert answer.source.startswith("llm-not-asked: no evidence scored 0.50 or more")


# --------------------------------------------------------------------------- 12: output cap, split on cut-off


def _half_reply(sentence: str) -> str:
    if "released" in sentence:
        data = reply_data()
        data["entities"] = data["entities"][:3]
        data["verb_phrases"] = data["verb_phrases"][:2]
        data["qa_pairs"] = data["qa_pairs"][:4]
        return as_text(data)
    return as_text({
        "entities": [{"id": "e1", "name": "Blaze Bayley", "type": "PERSON", "roles": ["solo performer"]},
                     {"id": "e2", "name": "Virus", "type": "WORK", "roles": ["song"], "aliases": ["Virus (song)"]}],
        "verb_phrases": [{"id": "v1", "text": "performed"}],
        "qa_pairs": [{"id": "q1", "verb_phrase_id": "v1", "question": "Who performed Virus in his solo career?",
                      "question_entity_ids": ["e2"], "answer_entity_ids": ["e1"]},
                     {"id": "q2", "verb_phrase_id": "v1", "question": "What did Blaze Bayley perform?",
                      "question_entity_ids": ["e1"], "answer_entity_ids": ["e2"]}],
    })  # fmt: skip


def test_cut_off_reply_splits_the_chunk_and_merges_the_halves() -> None:
    first, second = split_in_two(PASSAGE)
    cut = AIMessage(content=as_text(reply_data())[:700], response_metadata={"finish_reason": "length"})
    model = PassageChatModel(
        replies={PASSAGE: [cut], first: [_half_reply(first)], second: [_half_reply(second)]}
    )
    ex = extractor(model)
    result = ex.extract_one(job())
    gsw = result.gsw
    assert result.error is None and gsw is not None
    assert result.pieces == 2 and result.attempts == 3
    assert model.caps == [ex.output_cap(PASSAGE), ex.output_cap(first), ex.output_cap(second)]
    assert all(cap is not None and cap <= 8192 for cap in model.caps)
    assert len(gsw.qa_pairs) == 6
    virus = [e for e in gsw.entities if e.name == "Virus"]
    assert len(virus) == 1  # met in both halves, one entity
    assert {r.role for r in virus[0].roles} == {"single", "song"}
    assert set(virus[0].aliases) == {"Virus (Iron Maiden song)", "Virus (song)"}


def test_json_cut_mid_way_at_the_cap_splits_even_without_a_finish_reason() -> None:
    first, second = split_in_two(PASSAGE)
    cut = as_text(reply_data())[:400]  # about 100 tokens: at the 64-token cap set below
    model = PassageChatModel(
        replies={PASSAGE: [cut], first: [_half_reply(first)], second: [_half_reply(second)]}
    )
    result = extractor(model, max_output_tokens=64).extract_one(job())
    assert result.error is None and result.pieces == 2 and len(result.gsw.qa_pairs) == 6


def test_a_chunk_that_cannot_be_split_further_is_a_recorded_failure() -> None:
    cut = AIMessage(content=as_text(reply_data())[:700], response_metadata={"stop_reason": "max_tokens"})
    result = extractor(FakeMessagesListChatModel(responses=[cut]), max_split_depth=0).extract_one(job())
    assert result.gsw is None and "cut off at the output cap" in result.error
    assert "cannot be split further" in result.error


# --------------------------------------------------------------------------- 13: prompt wording


def test_prompt_covers_many_participants_and_unnamed_entities() -> None:
    assert "Three or more participants" in SYSTEM_PROMPT and "one question per participant" in SYSTEM_PROMPT
    assert "only describes something and never names it" in SYSTEM_PROMPT

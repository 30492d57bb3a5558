"""The 12 recorded replies of a real LLM, replayed through the extractor (issue 14's "done when").

The replies were written for prompt version gsw-extract-v1; the prompt has changed
since, so the fake model answers by the passage in the request rather than by the
exact messages. Checks are at the extractor's output (the GSW): every reply is
accepted on the first try, every role, state and alias the model wrote is still
there, and no QA pair answers a question with its own entity.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from engramdb.ingestion.extraction.extractors import ChunkJob, Extraction
from engramdb.ingestion.extraction.llm import SYSTEM_PROMPT, LLMExtractor
from engramdb.ingestion.extraction.offline import ChunkText
from engramdb.ingestion.gsw import GSW, Entity, self_answering
from engramdb.ingestion.reconcile import normalize_name

FOLDER = Path(__file__).parent / "fixtures" / "llm_recordings" / "gsw-extract-v1"


def _recording(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text())
    user = next(content for role, content in data["messages"] if role == "human")
    title_line, passage = user.split("\n\nPassage:\n", 1)
    return {"name": path.stem, "title": title_line.removeprefix("Document title: "), "passage": passage,
            "reply": data["reply"], "raw": json.loads(data["reply"])}  # fmt: skip


RECORDINGS = [_recording(p) for p in sorted(FOLDER.glob("*.json"))]


class RecordedChatModel(BaseChatModel):
    """Replays the recorded reply for the passage in the request (the network boundary of the test)."""

    replies: dict[str, str]
    requests: list[list[BaseMessage]] = Field(default_factory=list)

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ):
        self.requests.append(list(messages))
        user = next(m for m in messages if isinstance(m, HumanMessage))
        passage = str(user.content).split("Passage:\n", 1)[1]
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=self.replies[passage]))])

    @property
    def _llm_type(self) -> str:
        return "recorded-replies"


@pytest.fixture(scope="module")
def replayed() -> tuple[RecordedChatModel, list[Extraction]]:
    model = RecordedChatModel(replies={r["passage"]: r["reply"] for r in RECORDINGS})
    extractor = LLMExtractor(model, namespace="recordings", concurrency=2)
    jobs = [ChunkJob(ChunkText(r["passage"], r["title"]), r["name"]) for r in RECORDINGS]
    return model, extractor.extract_jobs(jobs)


def test_all_twelve_recorded_replies_are_accepted_first_time(replayed) -> None:
    model, results = replayed
    assert len(RECORDINGS) == 12
    assert all(r.error is None and r.gsw is not None for r in results), [r.error for r in results]
    assert [r.attempts for r in results] == [1] * 12 and len(model.requests) == 12
    assert all(isinstance(m[0], SystemMessage) and m[0].content == SYSTEM_PROMPT for m in model.requests)
    raw_pairs = sum(len(r["raw"]["qa_pairs"]) for r in RECORDINGS)
    kept_pairs = sum(len(r.gsw.qa_pairs) for r in results)
    dropped_pairs = [d for r in results for d in r.dropped if d.kind == "qa_pair"]
    assert raw_pairs == 213 and kept_pairs + len(dropped_pairs) == raw_pairs
    assert dropped_pairs and all("self-answering" in d.reason for d in dropped_pairs)
    assert all(d.kind in ("qa_pair", "entity", "verb_phrase") for r in results for d in r.dropped)
    assert sum(r.ignored_key_count for r in results) == 0


def _holder(gsw: GSW, raw_entity: dict[str, Any]) -> Entity:
    """The GSW entity carrying a raw entity: itself, or the entity it was merged into as another name."""
    for entity in gsw.entities:
        if entity.id == raw_entity["id"] and entity.name == raw_entity["name"]:
            return entity
    key = normalize_name(raw_entity["name"])
    merged = [e for e in gsw.entities if key in {normalize_name(a) for a in e.aliases}]
    assert len(merged) == 1, f"{raw_entity['name']!r} vanished"
    return merged[0]


def test_every_role_state_and_alias_of_the_replies_is_kept(replayed) -> None:
    _model, results = replayed
    counted = {"roles": 0, "states": 0, "aliases": 0}
    for recording, result in zip(RECORDINGS, results, strict=True):
        for raw_entity in recording["raw"]["entities"]:
            holder = _holder(result.gsw, raw_entity)
            states_of = {r.role: set(r.states) for r in holder.roles}
            for role in raw_entity["roles"]:
                counted["roles"] += 1
                assert role["role"] in states_of, (recording["name"], raw_entity["name"], role)
                counted["states"] += len(role["states"])
                assert set(role["states"]) <= states_of[role["role"]], (
                    recording["name"],
                    raw_entity["name"],
                    role,
                )
            for alias in raw_entity["aliases"]:
                counted["aliases"] += 1
                assert alias in holder.aliases or alias == holder.name, (recording["name"], alias)
    assert counted["roles"] >= 121 and counted["states"] > 0 and counted["aliases"] > 0


def test_no_recorded_pair_answers_its_own_question(replayed) -> None:
    _model, results = replayed
    for result in results:
        gsw = result.gsw
        for qa in gsw.qa_pairs:
            named = [gsw.entity(e) for e in qa.question_entity_ids]
            for answer in qa.answer_entity_ids:
                assert answer not in qa.question_entity_ids, qa.question
                assert self_answering(named, gsw.entity(answer)) is None, qa.question
    questions = {q.question for r in results for q in r.gsw.qa_pairs}
    assert "What is Virus (Iron Maiden song) known as in the passage?" not in questions
    assert "What is Betrayed (1917 film) known as in the passage?" not in questions
    titles = {e.name: e.aliases for r in results for e in r.gsw.entities if e.name in ("Virus", "Betrayed")}
    assert titles == {"Virus": ["Virus (Iron Maiden song)"], "Betrayed": ["Betrayed (1917 film)"]}

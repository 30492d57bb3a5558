"""GSW extraction with any langchain-core chat model.

The model is asked for one JSON object in the GSW schema — through the
provider's structured output (tool calling / JSON schema) when the model
supports it, as plain text otherwise. Replies are read the way real models
write them: prose or a note around the JSON, an extra key, ``null`` for an
empty list or a role written as a plain string are accepted (unknown keys are
counted in :attr:`GSW.ignored_keys`). The content rules of
:func:`~engramdb.ingestion.gsw.apply_rules` then drop and record the few
pairs that break them; only a reply with nothing usable left gets one retry,
which lists *every* problem at once. Still unusable, the chunk is recorded as
failed with the reasons (nothing partial is written for it).

Transient provider errors (429, timeouts, 5xx) are retried with backoff;
replies are capped at a length derived from the chunk, and a reply cut off at
the cap makes the extractor split the chunk in two and extract each half
(recursively, a bounded number of times), merging the results. Good
extractions are cached by model, prompt version and chunk, so re-running an
ingest never pays twice. Calls run with bounded concurrency.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable
from pydantic import BaseModel, ValidationError

from engramdb.ingestion.documents import split_sentences
from engramdb.ingestion.extraction.cache import ExtractionCache, cache_key
from engramdb.ingestion.extraction.extractors import ChunkJob, Extraction
from engramdb.ingestion.gsw import (
    ENTITY_TYPES,
    GSW,
    Dropped,
    Entity,
    QAPair,
    VerbPhrase,
    apply_rules,
    merge_gsws,
)
from engramdb.platform.errors import LLMError
from engramdb.platform.llm import (
    RetryPolicy,
    TruncatedJSONError,
    invoke_with_retry,
    is_transient,
    message_text,
    model_name,
    parse_json_reply,
    structured_runnable,
    token_usage,
    was_cut_off,
    with_output_cap,
)

PROMPT_VERSION = "gsw-extract-v2"

SYSTEM_PROMPT = """You turn one passage of a document into a semantic workspace and return it as a single JSON object.

The object has exactly these three lists:
  "entities": [{"id": "e1", "name": str, "type": str, "roles": [{"role": str, "states": [str]}], "aliases": [str]}]
  "verb_phrases": [{"id": "v1", "text": str}]
  "qa_pairs": [{"id": "q1", "verb_phrase_id": "v1", "question": str,
                "question_entity_ids": ["e1"], "answer_entity_ids": ["e2"]}]

Entities
- Make an entity of every person, organisation, place, work, event, date, number or other thing the passage
  mentions. Dates, places and amounts are entities in their own right, never attributes of another entity.
- type is exactly one of PERSON, ORG, PLACE, DATE, NUMBER, WORK, EVENT, THING.
- name is the fullest name the passage uses. When the passage only describes something and never names it
  ("the band's first album", "a local farmer"), use a short description that still makes sense without the
  passage as its name, e.g. "first Iron Maiden album" rather than "the album".
- roles say what the entity is in this passage ("director", "capital"); states give its condition there
  ("deceased", "lost").
- aliases hold the entity's other names: a name introduced with "also known as", a former name, or the
  document title when the title names this entity differently (a title "Virus (song)" for the song "Virus").
  An alias is not an entity of its own and never the subject or the answer of a question, so write no
  "known as" questions: the alias list already records the naming.

Verb phrases and questions
- A verb phrase is a relation or event that links two or more entities ("was born in", "directed",
  "is the capital of").
- For each verb phrase write one question per participating entity, answered by that entity and naming all
  the others. Two participants give one question each way. Three or more participants (who did what, when,
  where) give one question per participant, each naming the rest: "Who released Virus in 1996?",
  "What did Iron Maiden release in 1996?", "When did Iron Maiden release Virus?".
- question_entity_ids lists the entities the question names; answer_entity_ids lists the entities that
  answer it. No entity is in both lists, and an answer is never a question entity under another name.
- Write every name out in full inside the question. Never refer to an entity as he, she, it, they, him,
  them, this or these.
- Every entity appears in at least one question, named in it or as its answer.

Reply with the JSON object only: no text before or after it, no markdown."""

REPAIR_PROMPT = """Review the workspace you produced for the same passage and return a corrected, complete
JSON object in the same schema: add entities or verb phrases the passage states but the workspace misses,
add the question for every participant that has none yet, and keep every id reference valid."""

#: The schema handed to providers that support structured output (a JSON schema, so the reply
#: arrives as a dict and goes through the same tolerant reading as a text reply).
GSW_JSON_SCHEMA: dict[str, Any] = {
    "title": "semantic_workspace",
    "description": "Entities, verb phrases and question-answer pairs of one passage.",
    "type": "object",
    "properties": {
        "entities": {"type": "array", "items": {
            "type": "object",
            "properties": {
                "id": {"type": "string"}, "name": {"type": "string"},
                "type": {"type": "string", "enum": list(ENTITY_TYPES)},
                "roles": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"role": {"type": "string"}, "states": {"type": "array", "items": {"type": "string"}}},
                    "required": ["role", "states"]}},
                "aliases": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["id", "name", "type", "roles", "aliases"]}},
        "verb_phrases": {"type": "array", "items": {
            "type": "object", "properties": {"id": {"type": "string"}, "text": {"type": "string"}},
            "required": ["id", "text"]}},
        "qa_pairs": {"type": "array", "items": {
            "type": "object",
            "properties": {
                "id": {"type": "string"}, "verb_phrase_id": {"type": "string"}, "question": {"type": "string"},
                "question_entity_ids": {"type": "array", "items": {"type": "string"}},
                "answer_entity_ids": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["id", "verb_phrase_id", "question", "question_entity_ids", "answer_entity_ids"]}},
    },
    "required": ["entities", "verb_phrases", "qa_pairs"],
}  # fmt: skip

#: Output cap: recorded replies run 10-20 characters of JSON per passage character, at roughly
#: 3.5 characters per token, so about 6 tokens per passage character at most, plus a fixed margin.
CAP_BASE_TOKENS = 1024
CAP_TOKENS_PER_CHAR = 6
DEFAULT_MAX_OUTPUT_TOKENS = 8192
#: A piece shorter than this is not split further (its reply cannot be that long).
MIN_PIECE_CHARS = 40
#: A reply this close to the cap that stops inside its JSON was cut off by the cap.
CUT_OFF_SHARE = 0.9
SPLIT_FAILED = "the reply was cut off at the output cap, so the passage was split, but a piece failed: "
#: At most this many problems are listed in one retry message.
MAX_LISTED_PROBLEMS = 40


class UnusableReply(ValueError):
    """A reply with nothing usable in it; ``problems`` lists every reason."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


@dataclass
class _Outcome:
    """One conversation about one piece of text: a GSW, or why not, and what it cost."""

    gsw: GSW | None = None
    error: str | None = None
    truncated: bool = False
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    structured: bool = False
    problems: list[str] = field(default_factory=list)


class LLMExtractor:
    """Extractor backed by a chat model, with cache, retries, output cap and bounded concurrency."""

    def __init__(
        self,
        model: BaseChatModel,
        *,
        namespace: str,
        cache: ExtractionCache | None = None,
        concurrency: int = 4,
        repair_pass: bool = False,
        retries: int = 1,
        retry_policy: RetryPolicy | None = None,
        structured: bool = True,
        max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS,
        max_split_depth: int = 2,
    ) -> None:
        self.model = model
        self.namespace = namespace
        self.cache = cache
        self.concurrency = max(1, concurrency)
        self.repair_pass = repair_pass
        self.retries = retries
        self.retry_policy = retry_policy or RetryPolicy()
        self.structured = structured
        self.max_output_tokens = max_output_tokens
        self.max_split_depth = max_split_depth
        self.name = f"llm:{model_name(model)}:{PROMPT_VERSION}{'+repair' if repair_pass else ''}"
        self._runnables: dict[int, tuple[Runnable, bool]] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ public
    def extract_jobs(self, jobs: Sequence[ChunkJob]) -> list[Extraction]:
        if self.concurrency == 1 or len(jobs) <= 1:
            return [self.extract_one(job) for job in jobs]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(self.extract_one, jobs))

    def extract_one(self, job: ChunkJob) -> Extraction:
        key = cache_key(self.name, PROMPT_VERSION, job.chunk.title, job.chunk.text)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                return Extraction(gsw=GSW.model_validate_json(hit), cached=True)
        result = self._extract_text(job.chunk.title, job.chunk.text, depth=0)
        if result.gsw is not None and self.repair_pass:
            result = self._repair(job, result)
        if result.gsw is not None and self.cache is not None:
            self.cache.put(
                key, self.namespace, job.doc_id, result.gsw.model_dump_json(),
                (result.input_tokens, result.output_tokens),
            )  # fmt: skip
        return result

    def output_cap(self, text: str) -> int:
        """The reply cap for a passage: room for its workspace, rounded up to 512, within the maximum."""
        wanted = CAP_BASE_TOKENS + CAP_TOKENS_PER_CHAR * len(text)
        return min(self.max_output_tokens, -(-wanted // 512) * 512)

    # ------------------------------------------------------------------ one piece of text
    def _extract_text(self, title: str | None, text: str, depth: int) -> Extraction:
        outcome = self._converse(_messages(title, text), self.output_cap(text))
        if outcome.truncated:
            halves = split_in_two(text) if depth < self.max_split_depth else None
            if halves is None:
                return Extraction(
                    None, f"the reply was cut off at the output cap ({self.output_cap(text)} tokens) and the "
                    f"passage cannot be split further ({len(text)} characters)", outcome.input_tokens,
                    outcome.output_tokens, attempts=outcome.calls, structured=outcome.structured,
                )  # fmt: skip
            return self._extract_halves(title, halves, depth, outcome)
        return Extraction(
            outcome.gsw, outcome.error, outcome.input_tokens, outcome.output_tokens,
            attempts=outcome.calls, structured=outcome.structured,
        )  # fmt: skip

    def _extract_halves(
        self, title: str | None, halves: tuple[str, str], depth: int, cut: _Outcome
    ) -> Extraction:
        parts = [self._extract_text(title, half, depth + 1) for half in halves]
        tokens_in = cut.input_tokens + sum(p.input_tokens for p in parts)
        tokens_out = cut.output_tokens + sum(p.output_tokens for p in parts)
        calls = cut.calls + sum(p.attempts for p in parts)
        failed = [p.error or "no result" for p in parts if p.gsw is None]
        if failed:
            error = failed[0] if failed[0].startswith(SPLIT_FAILED) else SPLIT_FAILED + failed[0]
            return Extraction(None, error, tokens_in, tokens_out, attempts=calls, structured=cut.structured)
        merged = merge_gsws([p.gsw for p in parts if p.gsw is not None])
        pieces = sum(p.pieces for p in parts)
        return Extraction(
            merged, None, tokens_in, tokens_out, attempts=calls, pieces=pieces, structured=cut.structured
        )

    def _converse(self, messages: list[BaseMessage], cap: int) -> _Outcome:
        """Ask, read, and retry once with every problem listed; stop early on a cut-off reply."""
        outcome = _Outcome()
        for attempt in range(self.retries + 1):
            try:
                reply, data, reply_tokens = self._call(messages, cap, outcome)
            except LLMError as exc:
                outcome.error = str(exc)
                return outcome
            text = data if isinstance(data, str) else json.dumps(data)
            try:
                outcome.gsw = read_reply(parse_json_reply(data) if isinstance(data, str) else data)
                outcome.error = None
                return outcome
            except TruncatedJSONError as exc:
                outcome.problems = [str(exc)]
                cut_json = reply_tokens >= CUT_OFF_SHARE * cap  # else it just stopped early: retry it
            except UnusableReply as exc:
                outcome.problems, cut_json = exc.problems, False
            except ValueError as exc:
                outcome.problems, cut_json = [str(exc)], False
            if was_cut_off(reply) or cut_json:
                outcome.truncated, outcome.error = True, f"the reply stopped at the output cap ({cap} tokens)"
                return outcome
            if attempt < self.retries:
                messages = [*messages, AIMessage(content=text), HumanMessage(retry_message(outcome.problems))]
        outcome.error = f"extraction failed after {outcome.calls} attempts: {_listed(outcome.problems)}"
        return outcome

    def _call(self, messages: list[BaseMessage], cap: int, outcome: _Outcome) -> tuple[AIMessage, Any, int]:
        """One model call (transient errors retried): the raw message, the reply's data or text, its tokens."""
        runnable, structured = self._runnable(cap)
        try:
            out = invoke_with_retry(runnable, messages, self.retry_policy, "extraction call")
        except LLMError as exc:
            if not structured or exc.__cause__ is None or is_transient(exc.__cause__):
                raise
            # The provider refused structured output (schema or tools unsupported): plain JSON from now on.
            self.structured = False
            with self._lock:
                self._runnables.clear()
            return self._call(messages, cap, outcome)
        finally:
            outcome.calls += 1
        reply, data = _reply_and_data(out)
        used = token_usage(reply, sum(len(message_text(m)) for m in messages))  # type: ignore[arg-type]
        outcome.input_tokens += used[0]
        outcome.output_tokens += used[1]
        outcome.structured = structured
        return reply, data, used[1]

    def _runnable(self, cap: int) -> tuple[Runnable, bool]:
        """The model capped at ``cap`` tokens, with structured output when it supports it (cached per cap)."""
        with self._lock:
            if cap not in self._runnables:
                capped = with_output_cap(self.model, cap)
                built = structured_runnable(capped, GSW_JSON_SCHEMA) if self.structured else None
                self._runnables[cap] = (built, True) if built is not None else (capped, False)
            return self._runnables[cap]

    def _repair(self, job: ChunkJob, first: Extraction) -> Extraction:
        assert first.gsw is not None
        workspace = first.gsw.model_dump(include={"entities", "verb_phrases", "qa_pairs"})
        history: list[BaseMessage] = [
            *_messages(job.chunk.title, job.chunk.text),
            AIMessage(json.dumps(workspace)),
            HumanMessage(REPAIR_PROMPT),
        ]
        second = self._converse(history, self.output_cap(job.chunk.text))
        tokens = (first.input_tokens + second.input_tokens, first.output_tokens + second.output_tokens)
        calls = first.attempts + second.calls
        if second.gsw is None:  # keep the valid first pass rather than lose the chunk
            return Extraction(first.gsw, None, *tokens, attempts=calls, pieces=first.pieces,
                              structured=first.structured)  # fmt: skip
        return Extraction(second.gsw, None, *tokens, attempts=calls, structured=second.structured)


def _messages(title: str | None, text: str) -> list[BaseMessage]:
    return [
        SystemMessage(SYSTEM_PROMPT),
        HumanMessage(f"Document title: {title or '(none)'}\n\nPassage:\n{text}"),
    ]


def _reply_and_data(out: Any) -> tuple[AIMessage, Any]:
    """The raw AI message and what it carries: a dict from structured output, else the reply text."""
    if isinstance(out, dict) and "raw" in out:
        raw = out["raw"] if isinstance(out["raw"], AIMessage) else AIMessage(content=str(out["raw"]))
        parsed = out.get("parsed")
        if isinstance(parsed, BaseModel):
            parsed = parsed.model_dump()
        if isinstance(parsed, dict):
            return raw, parsed
        for call in raw.tool_calls:
            if isinstance(call.get("args"), dict) and call["args"]:
                return raw, call["args"]
        for call in raw.invalid_tool_calls:
            if isinstance(call.get("args"), str):
                return raw, call["args"]
        return raw, message_text(raw)
    reply = out if isinstance(out, AIMessage) else AIMessage(content=str(getattr(out, "content", out)))
    return reply, message_text(reply)


def retry_message(problems: Sequence[str]) -> str:
    """The follow-up that shows the model every problem of its reply at once."""
    listed = list(problems[:MAX_LISTED_PROBLEMS])
    if len(problems) > len(listed):
        listed.append(f"... and {len(problems) - len(listed)} more of the same kinds")
    lines = "\n".join(f"- {p}" for p in listed)
    return (
        f"That reply could not be used ({len(problems)} problem{'s' if len(problems) != 1 else ''}):\n{lines}\n"
        "Fix all of them and return the complete corrected JSON object only."
    )


def _listed(problems: Sequence[str]) -> str:
    shown = "; ".join(problems[:MAX_LISTED_PROBLEMS])
    more = len(problems) - MAX_LISTED_PROBLEMS
    return f"{len(problems)} problem(s): {shown}" + (f"; ... and {more} more" if more > 0 else "")


def split_in_two(text: str) -> tuple[str, str] | None:
    """The passage cut near its middle at a sentence end (else at a space), or None if too short."""
    if len(text) < 2 * MIN_PIECE_CHARS:
        return None
    sentences = split_sentences(text)
    if len(sentences) >= 2:
        lengths = [len(s) for s in sentences]
        total = sum(lengths)
        best = min(range(1, len(sentences)), key=lambda i: abs(sum(lengths[:i]) - total / 2))
        return " ".join(sentences[:best]), " ".join(sentences[best:])
    middle = len(text) // 2
    space = min((i for i, ch in enumerate(text) if ch.isspace()), key=lambda i: abs(i - middle), default=None)
    if space is None:
        return None
    first, second = text[:space].strip(), text[space:].strip()
    return (first, second) if first and second else None


# --------------------------------------------------------------------------- reading a reply

_SECTIONS = {"entities": Entity, "verb_phrases": VerbPhrase, "qa_pairs": QAPair}
_SINGULAR = {"entities": "entity", "verb_phrases": "verb phrase", "qa_pairs": "QA pair"}
_FIELDS = {name: set(model.model_fields) for name, model in _SECTIONS.items()}


def read_reply(data: Any) -> GSW:
    """A GSW from the JSON a model returned, as tolerant as the data allows; UnusableReply otherwise.

    Unknown keys are ignored (and counted), ``null`` lists are empty, a role
    or alias given as a plain string is read as one, numeric ids become
    strings. Items that still do not fit are dropped and recorded; then the
    content rules apply. The reply is unusable only when nothing usable is
    left although something was wrong with it (an honestly empty reply for a
    passage without facts is fine).
    """
    problems: list[str] = []
    ignored: dict[str, int] = {}
    data = _unwrap(data)
    if not isinstance(data, dict):
        raise UnusableReply([f"the reply must be one JSON object with the keys entities, verb_phrases and "
                             f"qa_pairs, not a JSON {_json_type(data)}"])  # fmt: skip
    if not set(data) & set(_SECTIONS):
        raise UnusableReply([f"the reply has none of the keys entities, verb_phrases, qa_pairs "
                             f"(keys: {', '.join(map(str, data)) or 'none'})"])  # fmt: skip
    for key in data:
        if key not in _SECTIONS:
            _count(ignored, str(key))
    dropped: list[Dropped] = []
    sections: dict[str, list[Any]] = {}
    for name, model in _SECTIONS.items():
        raw = data.get(name)
        if raw is None:
            raw = []
        if not isinstance(raw, list):
            problems.append(f"'{name}' must be a list, got a JSON {_json_type(raw)}")
            raw = []
        sections[name] = [
            item for i, raw_item in enumerate(raw)
            if (item := _read_item(name, model, i, raw_item, ignored, dropped)) is not None
        ]  # fmt: skip
    gsw = apply_rules(
        sections["entities"], sections["verb_phrases"], sections["qa_pairs"],
        types=ENTITY_TYPES, dropped=dropped, ignored_keys=ignored,
    )  # fmt: skip
    if not gsw.qa_pairs and (problems or gsw.dropped):
        raise UnusableReply([*problems, *(_described(d) for d in gsw.dropped)])
    return gsw


def _unwrap(data: Any) -> Any:
    """``{"workspace": {...the three lists...}}`` or ``[{...}]``: the object inside."""
    if isinstance(data, list) and len(data) == 1 and isinstance(data[0], dict):
        return data[0]
    if isinstance(data, dict) and len(data) == 1:
        inner = next(iter(data.values()))
        if isinstance(inner, dict) and set(inner) & set(_SECTIONS) and not set(data) & set(_SECTIONS):
            return inner
    return data


def _read_item(
    section: str,
    model: type[BaseModel],
    index: int,
    raw: Any,
    ignored: dict[str, int],
    dropped: list[Dropped],
) -> Any:
    where = f"{_SINGULAR[section]} {index + 1}"
    if not isinstance(raw, dict):
        dropped.append(
            Dropped(kind="item", id=where, reason=f"{where} is a JSON {_json_type(raw)}, not an object")
        )
        return None
    item: dict[str, Any] = {}
    for key, value in raw.items():
        if key in _FIELDS[section]:
            item[key] = value
        else:
            _count(ignored, f"{section}.{key}")
    item = _coerce(section, item, ignored)
    try:
        return model.model_validate(item)
    except ValidationError as exc:
        label = f"{where} ({item.get('id')})" if isinstance(item.get("id"), str) else where
        errors = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'item'}: {e['msg']}" for e in exc.errors())
        dropped.append(Dropped(kind="item", id=str(item.get("id") or where), reason=f"{label}: {errors}"))
        return None


def _coerce(section: str, item: dict[str, Any], ignored: dict[str, int]) -> dict[str, Any]:
    """The shapes real models use for our fields, turned into the schema's."""
    for key in ("id", "verb_phrase_id"):
        if isinstance(item.get(key), int | float) and not isinstance(item.get(key), bool):
            item[key] = str(item[key])
    if section == "entities":
        if not isinstance(item.get("type"), str) or not item["type"].strip():
            item.pop("type", None)
        item["aliases"] = _strings(item.get("aliases"))
        item["roles"] = [r for r in (_role(x, ignored) for x in _listed_value(item.get("roles"))) if r]
    elif section == "qa_pairs":
        for key in ("question_entity_ids", "answer_entity_ids"):
            item[key] = _strings(item.get(key))
    return item


def _role(value: Any, ignored: dict[str, int]) -> dict[str, Any] | None:
    if isinstance(value, str):
        return {"role": value, "states": []} if value.strip() else None
    if not isinstance(value, dict):
        return None
    for key in value:
        if key not in ("role", "states"):
            _count(ignored, f"entities.roles.{key}")
    return {"role": value.get("role"), "states": _strings(value.get("states"))}


def _listed_value(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _strings(value: Any) -> list[str]:
    """A list of non-empty strings from a list, a lone string, numbers or null."""
    out = []
    for v in _listed_value(value):
        if isinstance(v, int | float) and not isinstance(v, bool):
            v = str(v)
        if isinstance(v, str) and v.strip():
            out.append(v.strip())
    return out


def _count(counts: dict[str, int], key: str) -> None:
    counts[key] = counts.get(key, 0) + 1


def _described(item: Dropped) -> str:
    return item.reason if item.kind == "item" else f"{item.kind.replace('_', ' ')} {item.id}: {item.reason}"


def _json_type(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number"
    )

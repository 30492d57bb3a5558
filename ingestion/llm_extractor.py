"""GSW extraction with any langchain-core chat model.

The model is asked for one JSON object in the GSW schema. Its reply is parsed
and validated; a bad reply gets one retry that shows the model its mistake;
still bad, the chunk is recorded as failed with the reason (nothing partial is
written for it). Good extractions are cached by model, prompt version and
chunk, so re-running an ingest never pays twice. Calls run with bounded
concurrency.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import ValidationError

from engramdb.ingestion.extraction_cache import ExtractionCache, cache_key
from engramdb.ingestion.extractors import ChunkJob, Extraction
from engramdb.ingestion.gsw import GSW
from engramdb.platform.llm import message_text, model_name, parse_json_reply, token_usage

PROMPT_VERSION = "gsw-extract-v1"

SYSTEM_PROMPT = """You build a semantic workspace from one passage of a document, as JSON.

Return ONE JSON object with exactly three keys:
  "entities": [{"id": "e1", "name": str, "type": str, "roles": [{"role": str, "states": [str]}], "aliases": [str]}]
  "verb_phrases": [{"id": "v1", "text": str}]
  "qa_pairs": [{"id": "q1", "verb_phrase_id": "v1", "question": str,
                "question_entity_ids": ["e1"], "answer_entity_ids": ["e2"]}]

How to fill it:
- Entities are the people, organisations, places, works, events, dates, numbers and other things the
  passage names. Dates, places and quantities are entities of their own, not attributes.
  type is one of PERSON, ORG, PLACE, DATE, NUMBER, WORK, EVENT, THING.
  roles say what the entity is in this passage (e.g. "director", "birthplace") and states hold its
  condition there (e.g. "deceased", "retired"). Use the fullest name the passage gives.
- If the document title names an entity under another name, put the title in that entity's aliases
  and add a verb phrase "known as" with questions in both directions.
- A verb phrase is an event or relation between entities ("was born in", "directed", "is the capital of").
- For every verb phrase write questions in BOTH directions: one asks for each participating entity given
  the others. Questions must name their entities in full (never he/she/it/they/this), must be answerable
  from the passage, and their answers are entity ids, never free text. An entity named in a question is
  never its own answer.
- Every entity appears in at least one question, as a named entity or as an answer.
- Output JSON only: no commentary, no markdown."""

REPAIR_PROMPT = """Review the workspace you produced for the same passage and return a corrected, complete
JSON object in the same schema: add entities or verb phrases the passage states but the workspace misses,
add the reverse question wherever only one direction exists, and keep every id reference valid."""


class LLMExtractor:
    """Extractor backed by a chat model (``model.invoke``), with cache and bounded concurrency."""

    def __init__(
        self,
        model: BaseChatModel,
        *,
        namespace: str,
        cache: ExtractionCache | None = None,
        concurrency: int = 4,
        repair_pass: bool = False,
        retries: int = 1,
    ) -> None:
        self.model = model
        self.namespace = namespace
        self.cache = cache
        self.concurrency = max(1, concurrency)
        self.repair_pass = repair_pass
        self.retries = retries
        self.name = f"llm:{model_name(model)}:{PROMPT_VERSION}{'+repair' if repair_pass else ''}"

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
        result = self._ask(job)
        if result.gsw is not None and self.repair_pass:
            result = self._repair(job, result)
        if result.gsw is not None and self.cache is not None:
            self.cache.put(
                key, self.namespace, job.doc_id, result.gsw.model_dump_json(),
                (result.input_tokens, result.output_tokens),
            )  # fmt: skip
        return result

    def _ask(self, job: ChunkJob, history: list[BaseMessage] | None = None) -> Extraction:
        messages: list[BaseMessage] = history or [
            SystemMessage(SYSTEM_PROMPT),
            HumanMessage(f"Document title: {job.chunk.title or '(none)'}\n\nPassage:\n{job.chunk.text}"),
        ]
        tokens_in = tokens_out = 0
        error = "no reply"
        for attempt in range(self.retries + 1):
            try:
                reply = self.model.invoke(messages)
            except Exception as exc:  # provider/network errors become the chunk's recorded failure
                return Extraction(None, f"LLM call failed: {type(exc).__name__}: {exc}", tokens_in, tokens_out)
            if not isinstance(reply, AIMessage):
                reply = AIMessage(content=str(getattr(reply, "content", reply)))
            used = token_usage(reply, sum(len(message_text(m)) for m in messages))  # type: ignore[arg-type]
            tokens_in, tokens_out = tokens_in + used[0], tokens_out + used[1]
            text = message_text(reply)
            try:
                gsw = GSW.model_validate(parse_json_reply(text))
            except ValueError as exc:  # ValidationError is a ValueError too
                error = _describe(exc)
                if attempt < self.retries:
                    messages = [*messages, reply, HumanMessage(
                        f"That reply was not usable: {error}. Return the corrected JSON object only."
                    )]  # fmt: skip
                continue
            return Extraction(gsw, None, tokens_in, tokens_out)
        return Extraction(None, f"extraction failed after {self.retries + 1} attempts: {error}", tokens_in, tokens_out)

    def _repair(self, job: ChunkJob, first: Extraction) -> Extraction:
        assert first.gsw is not None
        history: list[BaseMessage] = [
            SystemMessage(SYSTEM_PROMPT),
            HumanMessage(f"Document title: {job.chunk.title or '(none)'}\n\nPassage:\n{job.chunk.text}"),
            AIMessage(json.dumps(first.gsw.model_dump())),
            HumanMessage(REPAIR_PROMPT),
        ]
        second = self._ask(job, history)
        tokens = (first.input_tokens + second.input_tokens, first.output_tokens + second.output_tokens)
        if second.gsw is None:  # keep the valid first pass rather than lose the chunk
            return Extraction(first.gsw, None, *tokens)
        return Extraction(second.gsw, None, *tokens)


def _describe(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "top level"
        return f"schema-invalid output ({exc.error_count()} errors; first at {where}: {first['msg']})"
    return str(exc)

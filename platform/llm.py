"""Chat models through ``langchain-core``, chosen by a ``provider:model`` setting.

Provider packages are optional extras (``pip install engramdb[openai]``); a
missing package or key is a clear configuration error, never a crash deep in
a pipeline. Tests pass a langchain-core fake chat model directly instead.
"""

from __future__ import annotations

import json
import re
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage

from engramdb.platform.config import Settings
from engramdb.platform.errors import ConfigError

_PROVIDERS = {
    "openai": ("langchain_openai", "ChatOpenAI", "openai_api_key", "OPENAI_API_KEY", "engramdb[openai]"),
    "anthropic": ("langchain_anthropic", "ChatAnthropic", "anthropic_api_key", "ANTHROPIC_API_KEY",
                  "engramdb[anthropic]"),
}  # fmt: skip


def make_chat_model(settings: Settings) -> BaseChatModel | None:
    """The configured chat model, or None when no LLM is configured (offline mode)."""
    if not settings.llm:
        return None
    provider, sep, model = settings.llm.partition(":")
    if not sep or not model or provider not in _PROVIDERS:
        raise ConfigError(
            f"invalid llm setting {settings.llm!r}: use '<provider>:<model>' with provider one of "
            f"{', '.join(sorted(_PROVIDERS))} (e.g. 'openai:gpt-4o-mini')"
        )
    module_name, class_name, key_field, key_env, extra = _PROVIDERS[provider]
    key = getattr(settings, key_field)
    if key is None or not key.get_secret_value():
        raise ConfigError(f"llm {settings.llm!r} needs an API key: set {key_env}")
    try:
        module = __import__(module_name, fromlist=[class_name])
    except ImportError as exc:
        raise ConfigError(f"llm {settings.llm!r} needs {module_name}: pip install '{extra}'") from exc
    chat_class = getattr(module, class_name)
    return chat_class(model=model, api_key=key.get_secret_value(), temperature=0)


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


_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def parse_json_reply(text: str) -> Any:
    """JSON from a model reply, tolerating a ```json fence; ValueError with the reason otherwise."""
    stripped = text.strip()
    if not stripped:
        raise ValueError("empty reply")
    match = _FENCE.match(stripped)
    if match:
        stripped = match.group(1)
    try:
        return json.loads(stripped)
    except json.JSONDecodeError as exc:
        raise ValueError(f"malformed JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from exc

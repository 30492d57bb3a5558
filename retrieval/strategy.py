"""The one extension point for answering: :class:`AskStrategy` and its registry.

A strategy turns a question into an :class:`~engramdb.retrieval.results.AskResult`
over one namespace's memory. Each strategy is one module that subclasses
:class:`AskStrategy`, declares a pydantic :class:`Recipe` with its knobs, and
registers itself with :func:`register_strategy`; its Cypher lives in
``cypher/<name>/``. The SDK (``Memory.ask(q, strategy=...)``), the CLI
(``ask --strategy``, ``eval --strategy``) and the LangChain / LlamaIndex
retrievers all resolve names through :func:`make_strategy`, so a new method
needs no edit anywhere else.

Recipes come from defaults, then the ``[ask.<strategy>]`` table of the
settings (TOML or ``ENGRAMDB_ASK__<STRATEGY>__<KNOB>``), then per-call
overrides (``--set key=value`` or keyword arguments).
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from engramdb.platform.embedders import Embedder
from engramdb.platform.errors import InputError
from engramdb.platform.graph import Graph
from engramdb.platform.vectors import VectorStore

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from engramdb.retrieval.decomposition import Decomposition
    from engramdb.retrieval.rerankers import Reranker
    from engramdb.retrieval.results import AskResult


class Recipe(BaseModel):
    """A strategy's knobs. Frozen, and unknown keys are errors (a typo must not pass silently).

    ``budget`` is every strategy's: the most evidence tokens a result may hold, counted with the
    tokenizer the evaluation uses; the strategy's ranked units are packed into it
    (:mod:`engramdb.retrieval.packing`). Unset, a strategy returns its own amount.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    budget: int | None = Field(
        None, ge=16, le=100_000,
        description="Evidence tokens at most (whole sentences; passages fill what the strategy's own units leave). "
        "Unset: the strategy's own amount.",
    )  # fmt: skip


@dataclass
class AskContext:
    """Everything a strategy may use, opened once per Memory and shared by its strategies.

    ``chat_model`` is None offline; ``decomposition`` says how sub-questions are
    made when the caller gives none (``auto``: the LLM when there is one, else
    the offline rules; ``llm``; ``offline``).
    """

    graph: Graph
    vectors: VectorStore
    embedder: Embedder
    reranker: Reranker
    chat_model: BaseChatModel | None = None
    decomposition: str = "auto"
    recipe_overrides: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def namespace(self) -> str:
        return self.graph.namespace


class AskStrategy(ABC):
    """Answers questions from one namespace's memory in one way.

    Subclasses set ``name``, ``recipe_type`` and a one-line ``summary``, and
    implement :meth:`ask`. A strategy is built once per (memory, recipe) and
    reused for many questions, so put per-question work in :meth:`ask` only.
    """

    name: ClassVar[str]
    summary: ClassVar[str] = ""
    recipe_type: ClassVar[type[Recipe]] = Recipe

    def __init__(self, context: AskContext, recipe: Recipe | None = None) -> None:
        self.context = context
        self.recipe = recipe if recipe is not None else self.recipe_type()

    @abstractmethod
    def ask(
        self,
        question: str,
        *,
        decomposition: Decomposition | Sequence[Sequence[str]] | None = None,
        trace: bool = False,
    ) -> AskResult:
        """Answer ``question``; ``decomposition`` (sub-questions) is used by strategies that decompose."""


def require_question(question: object) -> str:
    """The question, stripped; an empty or non-text question is a clear error in every strategy."""
    if not isinstance(question, str) or not question.strip():
        raise InputError("the question is empty")
    return question.strip()


_REGISTRY: dict[str, type[AskStrategy]] = {}
#: Modules whose import registers the built-in strategies (imported on first lookup,
#: so importing the registry stays cheap and free of cycles).
BUILTIN_STRATEGY_MODULES: tuple[str, ...] = (
    "engramdb.retrieval.chain.strategy",
    "engramdb.retrieval.passages",
    "engramdb.retrieval.diffusion.strategy",
    "engramdb.retrieval.hypergraph.strategy",
    "engramdb.retrieval.cluster.strategy",
)
_loaded = False


def register_strategy(cls: type[AskStrategy]) -> type[AskStrategy]:
    """Class decorator: make a strategy available by its ``name``."""
    existing = _REGISTRY.get(cls.name)
    if existing is not None and existing is not cls:
        raise ValueError(f"two strategies are named {cls.name!r}: {existing.__module__} and {cls.__module__}")
    _REGISTRY[cls.name] = cls
    return cls


def _load_builtins() -> None:
    """Import the built-in strategies, then order the registry as listed (chain first), whatever
    order their modules happened to be imported in; strategies registered elsewhere come after."""
    global _loaded
    if not _loaded:
        for module in BUILTIN_STRATEGY_MODULES:
            importlib.import_module(module)
        rank = {module: i for i, module in enumerate(BUILTIN_STRATEGY_MODULES)}
        ordered = sorted(_REGISTRY.items(), key=lambda item: rank.get(item[1].__module__, len(rank)))
        _REGISTRY.clear()
        _REGISTRY.update(ordered)
        _loaded = True


def strategy_names() -> list[str]:
    """Every registered strategy, in registration order (chain first)."""
    _load_builtins()
    return list(_REGISTRY)


def strategy_class(name: str) -> type[AskStrategy]:
    """The strategy class for ``name``; unknown names fail with the list of known ones."""
    _load_builtins()
    if name not in _REGISTRY:
        raise InputError(f"unknown strategy {name!r}; known strategies: {', '.join(_REGISTRY)}")
    return _REGISTRY[name]


def make_recipe(name: str, *layers: Mapping[str, Any] | None) -> Recipe:
    """The recipe of strategy ``name``: defaults updated by each layer in turn (later wins)."""
    cls = strategy_class(name).recipe_type
    values: dict[str, Any] = {}
    for layer in layers:
        values.update(layer or {})
    try:
        return cls(**values)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        known = ", ".join(cls.model_fields) or "none"
        raise InputError(
            f"invalid settings for strategy {name!r}: {problems} (its settings: {known})"
        ) from exc


def make_strategy(name: str, context: AskContext, **overrides: Any) -> AskStrategy:
    """Build strategy ``name`` over ``context``: recipe from settings, then ``overrides``."""
    cls = strategy_class(name)
    recipe = make_recipe(name, context.recipe_overrides.get(name), overrides)
    return cls(context, recipe)


def parse_assignments(pairs: Sequence[str]) -> dict[str, Any]:
    """``key=value`` strings (``--set``) into a dict; values are read as JSON when they parse, else text."""
    import json

    values: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--set takes key=value, got {pair!r}")
        try:
            values[key.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            values[key.strip()] = raw
    return values

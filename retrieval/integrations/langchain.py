"""engramdb memory as a LangChain retriever: the evidence of any strategy as Documents with metadata.

How much comes back follows LangChain's conventions (those its standard test suite,
``langchain_tests.integration_tests.RetrieversIntegrationTests``, checks): ``k`` caps the
number of Documents and can be set on the retriever or per call (``invoke(query, k=3)``), as
can the evidence token ``budget`` and the ``strategy``. The checks below are shared with the
LlamaIndex retriever, so both reject the same bad values with the same messages.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables.config import run_in_executor
from pydantic import ConfigDict, ValidationError, field_validator

from engramdb.platform.errors import InputError
from engramdb.retrieval.results import AskResult
from engramdb.retrieval.strategy import Recipe, strategy_class

#: Keyword arguments ``invoke`` may pass through besides ours: LangChain reads ``verbose`` for its
#: callbacks but leaves it in the keyword arguments it hands to ``_get_relevant_documents``.
LANGCHAIN_CALL_KWARGS = frozenset({"verbose"})
#: What a call may override, in the order error messages list them.
PER_CALL_OPTIONS = ("k", "budget", "strategy")


def evidence_records(result: AskResult) -> list[tuple[str, float, dict[str, Any]]]:
    """(text, score, metadata) per evidence item, with its citation; shared by both integrations."""
    cited = {c.evidence_id: c for c in result.citations}
    records = []
    for e in result.evidence:
        c = cited.get(e.id)
        metadata = {
            "kind": e.kind, "id": e.id, "score": e.score, "doc_id": e.doc_id, "chunk_ids": list(e.chunk_ids),
            "title": c.title if c else "", "source": c.source if c else "", "strategy": result.strategy,
            "engramdb_answer": result.answer, **e.metadata,
        }  # fmt: skip
        if e.kind == "qa_pair":
            metadata["qa_id"] = e.id
            metadata["chunk_id"] = e.chunk_id
        records.append((e.text, e.score, metadata))
    return records


def check_limit(value: object, name: str = "k") -> int | None:
    """``value`` as a result count: None (the strategy's own amount) or an int >= 0.

    Why strict: a bool or a float count is a caller's mistake that int() would hide.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int or None, not {type(value).__name__} ({value!r})")
    if value < 0:
        raise ValueError(f"{name} must be >= 0 (0 returns nothing), got {value}")
    return value


def check_budget(value: object) -> int | None:
    """``value`` as an evidence token budget: None or an int within every strategy's recipe bounds.

    The bounds are the recipe's own (:class:`engramdb.retrieval.strategy.Recipe`), checked here
    so a bad budget fails when the retriever is built, not at its first question.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(
            f"budget must be an int (evidence tokens) or None, not {type(value).__name__} ({value!r})"
        )
    try:
        Recipe(budget=value)
    except ValidationError as exc:
        reason = "; ".join(e["msg"] for e in exc.errors())
        raise ValueError(f"budget (evidence tokens) {value}: {reason}") from None
    return value


def check_strategy(value: object) -> str:
    """``value`` as the name of a registered ask strategy; unknown names list the known ones."""
    if not isinstance(value, str):
        raise TypeError(f"strategy must be a str, not {type(value).__name__} ({value!r})")
    try:
        strategy_class(value)
    except InputError as exc:
        raise ValueError(str(exc)) from None
    return value


def ask_records(
    memory: Any, query: str, *, strategy: str, k: int | None, budget: int | None
) -> list[tuple[str, float, dict[str, Any]]]:
    """The first ``k`` evidence records of ``memory.ask`` with ``budget``; shared by both integrations.

    ``k`` cuts after the strategy has ranked and packed its evidence, so the records are always a
    prefix of what ``Memory.ask`` returns (best / reading order first). ``k=0`` asks nothing.
    """
    if k == 0:
        return []
    result = memory.ask(query, strategy=strategy, budget=budget)
    return evidence_records(result)[:k]


class EngramRetriever(BaseRetriever):
    """``Memory.ask`` behind LangChain's retriever interface.

    ``memory`` is an :class:`engramdb.Memory`; ``strategy`` names any registered
    ask strategy (``chain`` by default, ``dense``, ``bm25``, ...). Each returned
    Document is one evidence item, best first. ``k`` caps how many Documents come
    back (the first ``k`` of the strategy's evidence; None: all of it) and
    ``budget`` caps the evidence tokens (``Memory.ask(..., budget=...)``; None: the
    strategy's own amount). ``k``, ``budget`` and ``strategy`` can also be given per
    call: ``retriever.invoke(query, k=3)``; an explicit ``None`` there lifts the cap.
    Unknown constructor or call arguments are errors, never silently ignored.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")
    memory: Any
    strategy: str = "chain"
    k: int | None = None
    budget: int | None = None

    @field_validator("k", mode="before")
    @classmethod
    def _check_k(cls, value: object) -> int | None:
        return check_limit(value)

    @field_validator("budget", mode="before")
    @classmethod
    def _check_budget(cls, value: object) -> int | None:
        return check_budget(value)

    @field_validator("strategy", mode="before")
    @classmethod
    def _check_strategy(cls, value: object) -> str:
        return check_strategy(value)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **options: Any
    ) -> list[Document]:
        """Documents for ``query``; ``options`` are the call's overrides of ``k``, ``budget``, ``strategy``.

        Declaring ``**options`` is what makes LangChain's ``invoke`` pass its extra keyword
        arguments here (``BaseRetriever._expects_other_args``).
        """
        unknown = sorted(set(options) - set(PER_CALL_OPTIONS) - LANGCHAIN_CALL_KWARGS)
        if unknown:
            raise TypeError(
                f"{type(self).__name__}.invoke got unknown keyword argument(s) {', '.join(unknown)}; "
                f"it takes {', '.join(PER_CALL_OPTIONS)}"
            )
        k = check_limit(options.get("k", self.k))
        budget = check_budget(options.get("budget", self.budget))
        strategy = check_strategy(options.get("strategy", self.strategy))
        records = ask_records(self.memory, query, strategy=strategy, k=k, budget=budget)
        return [Document(page_content=text, metadata=meta) for text, _, meta in records]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **options: Any
    ) -> list[Document]:
        """The sync path in an executor thread, with the call's options.

        Why override: ``BaseRetriever``'s default passes no keyword arguments on, so
        ``ainvoke(query, k=3)`` would fail there instead of returning three Documents.
        """
        return await run_in_executor(
            None, self._get_relevant_documents, query, run_manager=run_manager.get_sync(), **options
        )

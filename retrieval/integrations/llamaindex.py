"""engramdb memory as a LlamaIndex retriever (needs ``pip install engramdb[llamaindex]``).

How much comes back follows LlamaIndex's conventions: like its vector index retrievers,
``similarity_top_k`` caps the number of nodes, set in the constructor or later as an
attribute (``retriever.similarity_top_k = 3``), since ``retrieve(str | QueryBundle)`` takes
no options. ``budget`` (evidence tokens) and ``strategy`` work the same way.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from engramdb.retrieval.integrations.langchain import ask_records, check_budget, check_limit, check_strategy


class EngramLlamaIndexRetriever(BaseRetriever):
    """``Memory.ask`` behind LlamaIndex's retriever interface: one scored node per evidence item.

    ``strategy`` names any registered ask strategy (``chain`` by default).
    ``similarity_top_k`` caps how many nodes come back (the first ones of the
    strategy's evidence, best first; None: all of it) and ``budget`` caps the
    evidence tokens (``Memory.ask(..., budget=...)``; None: the strategy's own
    amount). All three are checked when set, so a bad value fails at once.
    ``kwargs`` go to LlamaIndex's ``BaseRetriever`` (``callback_manager``,
    ``verbose``, ...), which rejects any it does not know.
    """

    def __init__(
        self,
        memory: Any,
        strategy: str = "chain",
        similarity_top_k: int | None = None,
        budget: int | None = None,
        **kwargs: Any,
    ) -> None:
        self.memory = memory
        self.strategy = strategy
        self.similarity_top_k = similarity_top_k
        self.budget = budget
        super().__init__(**kwargs)

    @property
    def strategy(self) -> str:
        """The ask strategy every retrieval runs."""
        return self._strategy

    @strategy.setter
    def strategy(self, value: str) -> None:
        self._strategy = check_strategy(value)

    @property
    def similarity_top_k(self) -> int | None:
        """The most nodes a retrieval returns (None: the strategy's whole evidence)."""
        return self._similarity_top_k

    @similarity_top_k.setter
    def similarity_top_k(self, value: int | None) -> None:
        self._similarity_top_k = check_limit(value, "similarity_top_k")

    @property
    def budget(self) -> int | None:
        """The most evidence tokens a retrieval returns (None: the strategy's own amount)."""
        return self._budget

    @budget.setter
    def budget(self, value: int | None) -> None:
        self._budget = check_budget(value)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        records = ask_records(
            self.memory, query_bundle.query_str, strategy=self.strategy, k=self.similarity_top_k,
            budget=self.budget,
        )  # fmt: skip
        return [
            NodeWithScore(
                node=TextNode(text=text, id_=f"{meta['kind']}:{meta['id']}", metadata=meta), score=score
            )
            for text, score, meta in records
        ]

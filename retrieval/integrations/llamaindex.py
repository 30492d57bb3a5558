"""engramdb memory as a LlamaIndex retriever (needs ``pip install engramdb[llamaindex]``)."""

from __future__ import annotations

from typing import Any

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from engramdb.retrieval.integrations.langchain import evidence_records


class EngramLlamaIndexRetriever(BaseRetriever):
    """``Memory.ask`` behind LlamaIndex's retriever interface: one scored node per evidence item.

    ``strategy`` names any registered ask strategy (``chain`` by default).
    """

    def __init__(self, memory: Any, strategy: str = "chain", **kwargs: Any) -> None:
        self.memory = memory
        self.strategy = strategy
        super().__init__(**kwargs)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        result = self.memory.ask(query_bundle.query_str, strategy=self.strategy)
        return [
            NodeWithScore(
                node=TextNode(text=text, id_=f"{meta['kind']}:{meta['id']}", metadata=meta), score=score
            )
            for text, score, meta in evidence_records(result)
        ]

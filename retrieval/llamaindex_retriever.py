"""engramdb memory as a LlamaIndex retriever (needs ``pip install engramdb[llamaindex]``)."""

from __future__ import annotations

from typing import Any

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from engramdb.retrieval.langchain_retriever import evidence_records


class EngramLlamaIndexRetriever(BaseRetriever):
    """``Memory.ask`` behind LlamaIndex's retriever interface: one scored node per QA pair."""

    def __init__(self, memory: Any, **kwargs: Any) -> None:
        self.memory = memory
        super().__init__(**kwargs)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        result = self.memory.ask(query_bundle.query_str)
        return [
            NodeWithScore(node=TextNode(text=text, id_=meta["qa_id"], metadata=meta), score=score)
            for text, score, meta in evidence_records(result)
        ]

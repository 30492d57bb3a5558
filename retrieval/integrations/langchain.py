"""engramdb memory as a LangChain retriever: the evidence of any strategy as Documents with metadata."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from engramdb.retrieval.results import AskResult


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


class EngramRetriever(BaseRetriever):
    """``Memory.ask`` behind LangChain's retriever interface.

    ``memory`` is an :class:`engramdb.Memory`; ``strategy`` names any registered
    ask strategy (``chain`` by default, ``dense``, ``bm25``, ...). Each returned
    Document is one evidence item, best first.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)
    memory: Any
    strategy: str = "chain"

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        result = self.memory.ask(query, strategy=self.strategy)
        return [Document(page_content=text, metadata=meta) for text, _, meta in evidence_records(result)]

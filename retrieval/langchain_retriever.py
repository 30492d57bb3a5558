"""engramdb memory as a LangChain retriever: QA evidence as Documents with metadata."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from engramdb.retrieval.results import AskResult


def evidence_records(result: AskResult) -> list[tuple[str, float, dict[str, Any]]]:
    """(text, score, metadata) per evidence QA pair, with its citation; shared by both integrations."""
    cited = {c.qa_id: c for c in result.citations}
    records = []
    for e in result.evidence:
        c = cited.get(e.qa_id)
        metadata = {
            "qa_id": e.qa_id, "question": e.question, "answers": list(e.answers), "score": e.score,
            "doc_id": e.doc_id, "chunk_id": e.chunk_id, "title": c.title if c else "",
            "source": c.source if c else "", "engramdb_answer": result.answer,
        }  # fmt: skip
        records.append((e.text, e.score, metadata))
    return records


class EngramRetriever(BaseRetriever):
    """``Memory.ask`` behind LangChain's retriever interface.

    ``memory`` is an :class:`engramdb.Memory`; each returned Document is one
    QA pair of the evidence, best first.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)
    memory: Any

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        result = self.memory.ask(query)
        return [Document(page_content=text, metadata=meta) for text, _, meta in evidence_records(result)]

"""The LlamaIndex retriever's former import path, kept so existing code keeps working.

The class lives in :mod:`engramdb.retrieval.integrations.llamaindex`.
"""

from engramdb.retrieval.integrations.llamaindex import EngramLlamaIndexRetriever

__all__ = ["EngramLlamaIndexRetriever"]

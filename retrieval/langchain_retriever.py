"""The LangChain retriever's former import path, kept so existing code keeps working.

The class lives in :mod:`engramdb.retrieval.integrations.langchain`.
"""

from engramdb.retrieval.integrations.langchain import EngramRetriever

__all__ = ["EngramRetriever"]

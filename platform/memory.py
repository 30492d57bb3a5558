"""The SDK facade: ``Memory(namespace=...)`` with ingest, ask, delete and stats.

A Memory owns one Neo4j driver and one vector store, both opened lazily, and
applies the schema on first use, so ``Memory().stats()`` works on a fresh
machine with no set-up step.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from neo4j import Driver

from engramdb.platform.config import Settings, validate_namespace
from engramdb.platform.graph import Graph, apply_schema, connect
from engramdb.platform.vectors import VectorStore, open_vector_store


class Memory:
    """Structured memory in one namespace of one Neo4j + Qdrant pair."""

    def __init__(self, namespace: str | None = None, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self.namespace = validate_namespace(namespace or self.settings.namespace)

    # Stores, opened on first use -----------------------------------------
    @cached_property
    def driver(self) -> Driver:
        driver = connect(self.settings)
        apply_schema(driver, self.settings.neo4j_database)
        return driver

    @cached_property
    def graph(self) -> Graph:
        return Graph(self.driver, self.namespace, self.settings.neo4j_database)

    @cached_property
    def vectors(self) -> VectorStore:
        return open_vector_store(self.settings)

    # Operations -------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        """Node and relationship counts of this namespace, plus vector counts."""
        row = self.graph.read("traversals/namespace_counts")[0]
        return {"namespace": self.namespace, **row}

    def close(self) -> None:
        """Close the stores (the local Neo4j server keeps running; stop it with the CLI)."""
        if "driver" in self.__dict__:
            self.driver.close()
            del self.__dict__["driver"]
            self.__dict__.pop("graph", None)
        if "vectors" in self.__dict__:
            self.vectors.close()
            del self.__dict__["vectors"]

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

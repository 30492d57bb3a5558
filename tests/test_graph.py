"""Schema, named queries and namespace isolation on the real Neo4j."""

from __future__ import annotations

import pytest

from engramdb.platform import cypher_files
from engramdb.platform.graph import Graph, apply_schema


def test_schema_is_idempotent_and_complete(driver) -> None:
    first = apply_schema(driver)
    second = apply_schema(driver)
    assert first == second > 0
    constraints = {r["name"] for r in driver.execute_query("SHOW CONSTRAINTS").records}
    for label in ("document", "chunk", "entity", "verb_phrase", "gist", "memory_point", "cluster", "query_trace", "qa_namespace"):
        assert f"{label}_key" in constraints
    indexes = {r["name"]: r for r in driver.execute_query("SHOW INDEXES").records}
    assert indexes["entity_fulltext"]["type"] == "FULLTEXT"
    assert set(indexes["entity_fulltext"]["properties"]) == {"name", "aliases_text", "roles_text", "states_text", "namespace"}
    assert all(r["state"] == "ONLINE" for r in indexes.values())


def test_every_data_query_is_scoped_to_a_namespace() -> None:
    queries = cypher_files.names("writers") + cypher_files.names("traversals")
    assert queries
    for name in queries:
        assert "$namespace" in cypher_files.query(name), f"{name} ignores the namespace"


def test_documents_in_one_namespace_are_invisible_from_another(driver) -> None:
    a, b = Graph(driver, "graph-iso-a"), Graph(driver, "graph-iso-b")
    row = {"id": "doc-1", "title": "T", "source": "s", "content_hash": "h", "metadata_json": "{}", "status": "done"}
    a.write("writers/upsert_documents", rows=[row])
    try:
        assert [r["id"] for r in a.read("traversals/get_documents", ids=["doc-1"])] == ["doc-1"]
        assert b.read("traversals/get_documents", ids=["doc-1"]) == []
        assert b.read("traversals/namespace_counts")[0]["documents"] == 0
        assert a.read("traversals/namespace_counts")[0]["documents"] == 1
    finally:
        driver.execute_query("MATCH (d:Document {namespace: 'graph-iso-a'}) DETACH DELETE d")


def test_uniqueness_is_per_namespace(driver) -> None:
    from neo4j.exceptions import ConstraintError

    try:
        driver.execute_query("CREATE (:Entity {namespace: 'u-a', id: 'x'}), (:Entity {namespace: 'u-b', id: 'x'})")
        with pytest.raises(ConstraintError):
            driver.execute_query("CREATE (:Entity {namespace: 'u-a', id: 'x'})")
    finally:
        driver.execute_query("MATCH (e:Entity) WHERE e.namespace IN ['u-a', 'u-b'] DETACH DELETE e")


def test_write_many_is_one_transaction(driver) -> None:
    from neo4j.exceptions import ClientError

    g = Graph(driver, "atomic-test")
    row = {"id": "d", "title": "T", "source": "s", "content_hash": "h", "metadata_json": "{}", "status": "done"}
    with pytest.raises(ClientError):
        g.write_many([("writers/upsert_documents", {"rows": [row]}),
                      ("writers/set_document_status", {"rows": [{"id": "d", "status": {"bad": 1}, "error": None,
                                                                  "chunk_count": 0, "qa_count": 0}]})])  # fmt: skip
    assert g.read("traversals/get_documents", ids=["d"]) == []  # the first write was rolled back too


def test_invalid_namespace_is_rejected(driver) -> None:
    with pytest.raises(ValueError, match="invalid namespace"):
        Graph(driver, "bad namespace; DROP")


def test_browser_example_queries_run(driver) -> None:
    names = cypher_files.names("examples")
    assert len(names) >= 4
    params = {"namespace": "examples-test", "doc_id": "d", "name": "n", "entity_id": "e"}
    for name in names:
        driver.execute_query(cypher_files.query(name), params)  # runs without error on an empty namespace

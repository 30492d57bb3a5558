"""Schema, named queries and namespace isolation on the real Neo4j."""

from __future__ import annotations

import pytest
from neo4j import Record
from neo4j.exceptions import ClientError

from engramdb.platform import cypher_files
from engramdb.platform.graph import Graph, apply_schema


def document_row(doc_id: str, status: str) -> dict[str, str]:
    """A row for ``writers/upsert_documents``."""
    return {
        "id": doc_id,
        "title": "T",
        "source": "s",
        "content_hash": "h",
        "metadata_json": "{}",
        "status": status,
    }


def test_schema_is_idempotent_and_complete(driver) -> None:
    first = apply_schema(driver)
    second = apply_schema(driver)
    assert first == second > 0
    constraints = {r["name"] for r in driver.execute_query("SHOW CONSTRAINTS").records}
    for label in (
        "document",
        "chunk",
        "entity",
        "verb_phrase",
        "gist",
        "memory_point",
        "cluster",
        "query_trace",
        "memory_version",
        "qa_namespace",
    ):
        assert f"{label}_key" in constraints
    indexes = {r["name"]: r for r in driver.execute_query("SHOW INDEXES").records}
    assert indexes["entity_search"]["type"] == "FULLTEXT"
    assert set(indexes["entity_search"]["properties"]) == {
        "name",
        "aliases_text",
        "roles_text",
        "states_text",
        "namespace_key",
    }
    assert set(indexes["chunk_search"]["properties"]) == {"title", "text", "namespace_key"}
    assert "entity_fulltext" not in indexes and "chunk_fulltext" not in indexes  # replaced by the migration
    assert all(r["state"] == "ONLINE" for r in indexes.values())


def test_every_data_query_is_scoped_to_a_namespace() -> None:
    queries = cypher_files.names("writers") + cypher_files.names("traversals")
    assert queries
    for name in queries:
        assert "$namespace" in cypher_files.query(name), f"{name} ignores the namespace"


def test_documents_in_one_namespace_are_invisible_from_another(driver) -> None:
    a, b = Graph(driver, "graph-iso-a"), Graph(driver, "graph-iso-b")
    row = document_row("doc-1", "done")
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
        driver.execute_query(
            "CREATE (:Entity {namespace: 'u-a', id: 'x'}), (:Entity {namespace: 'u-b', id: 'x'})"
        )
        with pytest.raises(ConstraintError):
            driver.execute_query("CREATE (:Entity {namespace: 'u-a', id: 'x'})")
    finally:
        driver.execute_query("MATCH (e:Entity) WHERE e.namespace IN ['u-a', 'u-b'] DETACH DELETE e")


def test_write_many_is_one_transaction(driver) -> None:
    g = Graph(driver, "atomic-test")
    row = document_row("d", "done")
    with pytest.raises(ClientError):
        g.write_many([("writers/upsert_documents", {"rows": [row]}),
                      ("writers/set_document_status", {"rows": [{"id": "d", "status": {"bad": 1}, "error": None,
                                                                  "chunk_count": 0, "qa_count": 0}]})])  # fmt: skip
    assert g.read("traversals/get_documents", ids=["d"]) == []  # the first write was rolled back too


def test_rows_come_back_as_plain_values_and_a_node_would_be_caught(driver) -> None:
    """Named reads return nested lists as the driver decoded them, equal to ``Record.data()``; the
    suite's check (conftest) flags a row holding a node, which only ``Record.data()`` turns into a dict."""
    from engramdb.platform import graph as graph_module

    g = Graph(driver, "rows-test")
    g.write("writers/upsert_documents", rows=[document_row("d", "done")])
    assert g.read("traversals/get_documents", ids=["d"])[0]["id"] == "d"
    with driver.session() as session:
        result = session.run(
            "MATCH (d:Document {namespace: 'rows-test', id: 'd'}) RETURN d, [[1, 'a']] AS nested"
        )
        keys, record = result.keys(), result.single()
    with pytest.raises(AssertionError, match="graph entity"):
        graph_module.row_dict(keys, record)
    plain = Record([("nested", record["nested"])])
    assert graph_module.row_dict(["nested"], plain) == {"nested": [[1, "a"]]}


def test_every_document_write_or_delete_changes_the_memory_version(driver) -> None:
    """What the diffusion walk snapshot and chain's N/A calibration check before use: any
    document write, status change or delete bumps it, in the same transaction; reads and other
    namespaces leave it alone; a namespace wiped and written again never repeats a version."""
    g, other = Graph(driver, "version-a"), Graph(driver, "version-b")
    row = document_row("d", "pending")
    status = {
        "id": "d",
        "status": "done",
        "error": None,
        "chunk_count": 0,
        "qa_count": 0,
        "ingest_version": "v",
    }
    wipe = "MATCH (n) WHERE n.namespace IN ['version-a', 'version-b'] DETACH DELETE n"
    driver.execute_query(wipe)
    try:
        seen = [g.memory_version()]
        assert seen[0] == "None:0"  # nothing written yet
        g.write("writers/upsert_documents", rows=[row])
        seen.append(g.memory_version())
        g.write("writers/set_document_status", rows=[status])
        seen.append(g.memory_version())
        with pytest.raises(ClientError):  # a failed write rolls its bump back with it
            g.write("writers/set_document_status", rows=[{**status, "status": {"bad": 1}}])
        g.read("traversals/get_documents", ids=["d"])
        other.write("writers/upsert_documents", rows=[row])
        other.write("writers/delete_document_node", doc_id="d")
        assert g.memory_version() == seen[-1]  # nor do reads and another namespace's writes
        g.write("writers/delete_document_node", doc_id="d")
        seen.append(g.memory_version())
        assert len(set(seen)) == 4 and [int(v.split(":")[1]) for v in seen] == [0, 1, 2, 3]
        driver.execute_query(wipe)
        g.write("writers/upsert_documents", rows=[row])
        assert g.memory_version().endswith(":1") and g.memory_version() not in seen  # new epoch
    finally:
        driver.execute_query(wipe)


def test_invalid_namespace_is_rejected(driver) -> None:
    with pytest.raises(ValueError, match="invalid namespace"):
        Graph(driver, "bad namespace; DROP")


def test_browser_example_queries_run(driver) -> None:
    names = cypher_files.names("examples")
    assert len(names) >= 4
    params = {"namespace": "examples-test", "doc_id": "d", "name": "n", "chunk_id": "d#0", "query_id": "q"}
    for name in names:
        driver.execute_query(cypher_files.query(name), params)  # runs without error on an empty namespace


def test_autostart_is_a_setting_and_starting_is_logged(
    neo4j_server, settings, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Off: no server is started and the error says how to start one. On: the server is
    started, one INFO line says so, and its password is on no command line."""
    import logging
    import subprocess

    from engramdb.platform.errors import ConfigError
    from engramdb.platform.graph import connect

    neo4j_server.stop()
    with pytest.raises(ConfigError) as info:
        connect(settings.model_copy(update={"neo4j_autostart": False}))
    message = str(info.value)
    assert "no local Neo4j is running" in message and neo4j_server.bolt_uri in message
    assert "`engramdb neo4j start`" in message and "ENGRAMDB_NEO4J_AUTOSTART=true" in message
    assert neo4j_server.pid() is None  # nothing was started

    spawned: list[str] = []
    real_popen = subprocess.Popen

    def recording_popen(args, *rest, **kwargs):  # type: ignore[no-untyped-def]
        spawned.append(" ".join(map(str, args)))
        return real_popen(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", recording_popen)
    with caplog.at_level(logging.INFO, logger="engramdb"):
        driver = connect(settings)  # autostart is on by default
    try:
        assert driver.execute_query("RETURN 1 AS one").records[0]["one"] == 1
    finally:
        driver.close()
    assert neo4j_server.pid() is not None
    started = [r for r in caplog.records if r.name == "engramdb" and r.levelno == logging.INFO]
    assert [r.getMessage() for r in started] == [
        f"started the local Neo4j at {neo4j_server.bolt_uri}; it keeps running until `engramdb neo4j stop`"
    ]
    assert any("CommunityEntryPoint" in argv for argv in spawned)
    assert all(neo4j_server.password() not in argv for argv in spawned)

    caplog.clear()
    with caplog.at_level(logging.INFO, logger="engramdb"):
        connect(settings.model_copy(update={"neo4j_autostart": False})).close()  # running: connects, no log
    assert not [r for r in caplog.records if r.name == "engramdb"]

"""``engramdb cypher``: read-only analyst queries, and the catalogue in ``cypher/examples/``.

The memory is the five short documents of tests/fixtures/hypergraph_corpus.json,
ingested offline into the real Neo4j with every memory stage (gists, clusters),
plus one kept hypergraph run. Each catalogue query is checked against the same
facts read back raw from the graph and recomputed in Python, so a row has to
mean what the query's description says. The safety tests count nodes and
relationships before and after every refused query.
"""

from __future__ import annotations

import json
import re
import uuid
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engramdb.platform.errors import InputError
from engramdb.platform.interfaces import analyst
from engramdb.platform.interfaces.analyst import QueryRefused, QueryTimedOut
from engramdb.platform.interfaces.cli import main
from engramdb.platform.interfaces.memory import Memory
from tests.conftest import cli_environment, private_settings

CORPUS = json.loads((Path(__file__).parent / "fixtures" / "hypergraph_corpus.json").read_text())
TWO_HOP = (
    "Who was the first president of the association that published the Journal of Psychotherapy Integration?"
)
JOURNAL, APA = "Journal of Psychotherapy Integration", "American Psychological Association"


@pytest.fixture(scope="module")
def mem(tmp_path_factory, neo4j_server, settings, driver):
    """The five documents and one kept hypergraph run, built once for the module."""
    cfg = private_settings(tmp_path_factory.mktemp("analyst-home"), neo4j_server, settings)
    memory = Memory(namespace=f"an{uuid.uuid4().hex[:12]}", settings=cfg)
    memory.ingest(CORPUS)
    memory.kept = memory.ask(TWO_HOP, strategy="hypergraph", keep_memory=True)  # type: ignore[attr-defined]
    yield memory
    memory.close()


def raw(mem: Memory, text: str, **params: Any) -> list[dict[str, Any]]:
    """Facts read back directly (not through the analyst runner), namespaced."""
    records = mem.driver.execute_query(text, {"ns": mem.namespace, **params}).records
    return [r.data() for r in records]


def example(mem: Memory, query_name: str, limit: int = 1000, **params: Any) -> list[dict[str, Any]]:
    entry = analyst.example(query_name)
    result = analyst.run_cypher(mem.driver, entry.text, {**params, "namespace": mem.namespace}, limit=limit)
    assert not result.truncated
    return result.rows


def counts(mem: Memory) -> tuple[int, int]:
    """Every node and relationship in the database (not only the namespace)."""
    row = mem.driver.execute_query(
        "CALL () { MATCH (n) RETURN count(n) AS nodes } CALL () { MATCH ()-[r]->() RETURN count(r) AS rels } "
        "RETURN nodes, rels"
    ).records[0]
    return row["nodes"], row["rels"]


def entity_id(mem: Memory, name: str) -> str:
    rows = raw(mem, "MATCH (e:Entity {namespace: $ns, name: $name}) RETURN e.id AS id", name=name)
    assert len(rows) == 1, f"expected one entity named {name!r}"
    return rows[0]["id"]


def qa_edges(mem: Memory) -> list[dict[str, Any]]:
    """Every QA edge with its verb phrase's participants."""
    return raw(
        mem,
        "MATCH (v:VerbPhrase {namespace: $ns})-[q:QA]->(a:Entity) "
        "RETURN q.id AS qa_id, q.question AS question, q.question_entity_ids AS asks, q.doc_id AS doc_id, "
        "a.id AS answer, a.name AS answer_name, v.id AS verb_phrase, [(e:Entity)-[:ROLE_IN]->(v) | e.id] AS roles",
    )


# --------------------------------------------------------------------------- the catalogue


EXAMPLE_PARAMS: dict[str, dict[str, Any]] = {
    "document_workspace": {"doc_id": "jpi"},
    "two_hop_paths": {"name": JOURNAL},
    "entity_neighbourhood": {"name": APA},
    "entity_questions": {"name": APA},
    "chunk_gist_facts": {"chunk_id": "jpi#0"},
    "chunk_network": {"chunk_id": "jpi#0"},
    "cluster_path_to_top": {"chunk_id": "jpi#0"},
}


def test_every_example_has_a_header_and_runs_with_exactly_its_parameters(mem: Memory) -> None:
    """A one-line description, a ``:param`` line per parameter the query uses, $namespace everywhere."""
    entries = analyst.examples()
    assert {"document_workspace", "entity_neighbourhood", "answer_chains", "orphans", "duplicate_entities",
            "biggest_entities", "chunk_gist_facts", "kept_run", "cluster_path_to_top"} <= {e.name for e in entries}  # fmt: skip
    for entry in entries:
        assert entry.description and len(entry.description) < 250, entry.name
        used = _parameters(entry.text)
        assert "namespace" in used, f"{entry.name} does not filter by $namespace"
        assert used - {"namespace"} == set(entry.params), entry.name
        params = EXAMPLE_PARAMS.get(entry.name, {})
        if "query_id" in entry.params:
            params = {"query_id": mem.kept.details.query_id}  # type: ignore[attr-defined]
        analyst.run_cypher(mem.driver, entry.text, {**params, "namespace": mem.namespace})


def _parameters(text: str) -> set[str]:
    import re

    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    return set(re.findall(r"\$([A-Za-z_][A-Za-z0-9_]*)", body))


def test_documents_lists_every_document(mem: Memory) -> None:
    rows = example(mem, "documents")
    assert sorted(r["id"] for r in rows) == sorted(d["id"] for d in CORPUS)
    assert all(r["status"] == "done" and r["chunks"] == 1 for r in rows)


def test_document_workspace_is_one_row_per_verb_phrase_without_multiplying(mem: Memory) -> None:
    rows = example(mem, "document_workspace", doc_id="jpi")
    phrases = raw(
        mem,
        "MATCH (:Document {namespace: $ns, id: 'jpi'})-[:HAS_CHUNK]->(:Chunk)-[:HAS_VERB_PHRASE]->(v) "
        "RETURN v.id AS id, v.text AS text, [(e:Entity)-[:ROLE_IN]->(v) | e.name] AS entities, "
        "COUNT { (v)-[:QA]->() } AS qa",
    )
    assert len(phrases) >= 2
    assert len(rows) == len(phrases)  # not (QA edges x participants) rows
    assert Counter(r["v"]["id"] for r in rows) == Counter(p["id"] for p in phrases)
    by_id = {p["id"]: p for p in phrases}
    for row in rows:
        phrase = by_id[row["v"]["id"]]
        assert row["d"]["id"] == "jpi" and row["verb_phrase"] == phrase["text"]
        assert sorted(row["entities"]) == sorted(phrase["entities"])
        assert sorted(e["name"] for e in row["participants"]) == sorted(phrase["entities"])
        assert len(row["qa_edges"]) == len(row["answers"]) == len(row["qa_pairs"]) == phrase["qa"]
    assert any(JOURNAL in r["entities"] and APA in r["entities"] for r in rows)


def test_two_hop_paths_have_a_real_middle_hop(mem: Memory) -> None:
    rows = example(mem, "two_hop_paths", name=JOURNAL.lower())  # case-insensitive name
    assert rows
    start = entity_id(mem, JOURNAL)
    for row in rows:
        nodes = row["path"].nodes
        first_qa, second_qa = row["path"].relationships[1], row["path"].relationships[3]
        assert [next(iter(n.labels)) for n in nodes] == [
            "Entity",
            "VerbPhrase",
            "Entity",
            "VerbPhrase",
            "Entity",
        ]
        begin, middle, last = nodes[0]["id"], nodes[2]["id"], nodes[4]["id"]
        assert begin == start and len({begin, middle, last}) == 3  # the middle differs from both ends
        assert begin in first_qa["question_entity_ids"]  # hop 1 asks about the start ...
        assert middle in second_qa["question_entity_ids"]  # ... hop 2 about the middle entity
        assert row["middle"] == nodes[2]["name"] and row["reaches"] == nodes[4]["name"]
    assert (APA, "G. Stanley Hall") in {(r["middle"], r["reaches"]) for r in rows}


def test_entity_neighbourhood_spans_documents_and_matches_the_qa_edges(mem: Memory) -> None:
    apa = entity_id(mem, APA)
    rows = example(mem, "entity_neighbourhood", name=APA)
    expected = Counter()
    for edge in qa_edges(mem):
        if apa in edge["asks"] and apa in edge["roles"]:
            expected[("asked about", edge["question"], edge["doc_id"])] += 1
        if edge["answer"] == apa:
            expected[("answer", edge["question"], edge["doc_id"])] += 1
    assert Counter((r["role"], r["question"], r["doc_id"]) for r in rows) == expected
    assert {r["doc_id"] for r in rows} == {"jpi", "apa"}  # across documents
    assert {r["role"] for r in rows} == {"asked about", "answer"}
    assert all(r["other_entity"] != APA for r in rows if r["role"] == "asked about")


def test_entity_questions_are_the_qa_pairs_about_the_entity(mem: Memory) -> None:
    apa = entity_id(mem, APA)
    rows = example(mem, "entity_questions", name=APA.upper())
    expected = sorted(
        (e["question"], e["answer_name"]) for e in qa_edges(mem) if apa in e["asks"] and apa in e["roles"]
    )
    assert sorted((r["question"], r["answer"]) for r in rows) == expected and expected


def test_biggest_entities_count_their_qa_pairs_and_documents(mem: Memory) -> None:
    rows = example(mem, "biggest_entities")
    ids = {
        r["name"]: r["id"]
        for r in raw(mem, "MATCH (e:Entity {namespace: $ns}) RETURN e.name AS name, e.id AS id")
    }
    asked, answered = defaultdict(set), defaultdict(set)
    for edge in qa_edges(mem):
        for entity in edge["asks"]:
            if entity in edge["roles"]:
                asked[entity].add(edge["qa_id"])
        answered[edge["answer"]].add(edge["qa_id"])
    mentions = raw(mem, "MATCH (:Chunk {namespace: $ns})-[m:MENTIONS]->(e:Entity) "
                        "RETURN e.id AS id, count(DISTINCT m.doc_id) AS docs")  # fmt: skip
    documents = {m["id"]: m["docs"] for m in mentions}
    assert rows and [r["qa_pairs"] for r in rows] == sorted((r["qa_pairs"] for r in rows), reverse=True)
    for row in rows:
        entity = ids[row["entity"]]
        assert row["asked_about"] == len(asked[entity]) and row["answer_to"] == len(answered[entity])
        assert row["qa_pairs"] == row["asked_about"] + row["answer_to"]
        assert row["documents"] == documents[entity]
    biggest = max(len(asked[e]) + len(answered[e]) for e in ids.values())
    assert rows[0]["qa_pairs"] == biggest


def test_shared_entities_are_mentioned_by_several_documents(mem: Memory) -> None:
    rows = example(mem, "shared_entities")
    mentions = raw(mem, "MATCH (:Chunk {namespace: $ns})-[m:MENTIONS]->(e:Entity) "
                        "RETURN e.name AS name, count(DISTINCT m.doc_id) AS docs")  # fmt: skip
    expected = {m["name"]: m["docs"] for m in mentions if m["docs"] > 1}
    assert {r["entity"]: r["documents"] for r in rows} == expected
    assert expected.get(APA) == 2 and expected.get("Hank Snow") == 2


def test_orphan_check_is_empty_on_consistent_memory_and_names_planted_orphans(mem: Memory) -> None:
    assert example(mem, "orphans") == []
    lost_entity, lost_point = f"ent-lost-{uuid.uuid4().hex[:6]}", f"mp-lost-{uuid.uuid4().hex[:6]}"
    mem.driver.execute_query(
        "CREATE (:Entity {namespace: $ns, id: $e, name: 'Nobody'}), "
        "(:MemoryPoint {namespace: $ns, id: $p, description: 'adrift'})",
        ns=mem.namespace, e=lost_entity, p=lost_point,
    )  # fmt: skip
    try:
        rows = example(mem, "orphans")
        assert {(r["label"], r["id"], r["problem"]) for r in rows} == {
            ("Entity", lost_entity, "no chunk mentions it"),
            ("MemoryPoint", lost_point, "no query has it"),
        }
    finally:
        mem.driver.execute_query("MATCH (n {namespace: $ns}) WHERE n.id IN [$e, $p] DETACH DELETE n",
                                 ns=mem.namespace, e=lost_entity, p=lost_point)  # fmt: skip


def test_duplicate_entities_are_entities_sharing_a_name_or_alias(mem: Memory) -> None:
    twin = f"ent-twin-{uuid.uuid4().hex[:6]}"
    mem.driver.execute_query(
        "CREATE (:Entity {namespace: $ns, id: $id, name: 'Hank Snow', normalized_name: 'hank snow', "
        "type: 'WORK', alias_keys: ['hank snow']})",
        ns=mem.namespace, id=twin,
    )  # fmt: skip
    try:
        rows = example(mem, "duplicate_entities")
        keys = defaultdict(set)
        for entity in raw(mem, "MATCH (e:Entity {namespace: $ns}) RETURN e.id AS id, e.alias_keys AS keys"):
            for key in entity["keys"] or []:
                keys[key].add(entity["id"])
        expected = {key: ids for key, ids in keys.items() if len(ids) > 1}
        assert {r["key"]: set(r["ids"]) for r in rows} == expected
        hank = next(r for r in rows if r["key"] == "hank snow")
        assert set(hank["ids"]) == {twin, entity_id_by(mem, "Hank Snow", not_id=twin)}
        assert "Hank Snow (WORK)" in hank["entities"]
    finally:
        mem.driver.execute_query("MATCH (e:Entity {namespace: $ns, id: $id}) DETACH DELETE e",
                                 ns=mem.namespace, id=twin)  # fmt: skip


def entity_id_by(mem: Memory, name: str, not_id: str) -> str:
    rows = raw(mem, "MATCH (e:Entity {namespace: $ns, name: $name}) WHERE e.id <> $other RETURN e.id AS id",
               name=name, other=not_id)  # fmt: skip
    return rows[0]["id"]


def test_chunk_gist_and_facts(mem: Memory) -> None:
    rows = example(mem, "chunk_gist_facts", chunk_id="jpi#0")
    gist = raw(mem, "MATCH (:Chunk {namespace: $ns, id: 'jpi#0'})-[:HAS_GIST]->(g:Gist) "
                    "RETURN g.text AS text, [(g)-[:MENTIONS]->(e:Entity) | e.name] AS names")  # fmt: skip
    facts = raw(mem, "MATCH (:Chunk {namespace: $ns, id: 'jpi#0'})-[:HAS_VERB_PHRASE]->(v:VerbPhrase) "
                     "RETURN v.text AS text, [(e:Entity)-[:ROLE_IN]->(v) | e.name] AS names, "
                     "COUNT { (v)-[:QA]->() } AS qa")  # fmt: skip
    assert len(gist) == 1 and facts
    assert rows[0]["kind"] == "gist" and rows[0]["text"] == gist[0]["text"]
    assert sorted(rows[0]["entities"]) == sorted(gist[0]["names"]) and JOURNAL in rows[0]["text"]
    fact_rows = rows[1:]
    assert all(r["kind"] == "fact" and r["chunk"] == JOURNAL for r in fact_rows)
    assert sorted((r["text"], tuple(sorted(r["entities"])), len(r["qa_pairs"])) for r in fact_rows) == sorted(
        (f["text"], tuple(sorted(f["names"])), f["qa"]) for f in facts
    )


def test_kept_runs_and_the_run_as_a_graph(mem: Memory) -> None:
    query_id = mem.kept.details.query_id  # type: ignore[attr-defined]
    points = raw(mem, "MATCH (:Query {namespace: $ns, id: $q})-[:HAS_POINT]->(p:MemoryPoint) "
                      "RETURN p.id AS id, p.step AS step, p.seq AS seq, p.active AS active, "
                      "[(p)-[:MERGED_FROM|REVISES]->(o) | o.id] AS replaced", q=query_id)  # fmt: skip
    runs = example(mem, "kept_runs")
    assert [(r["query_id"], r["question"], r["points"], r["active_points"]) for r in runs] == [
        (query_id, TWO_HOP, len(points), sum(p["active"] for p in points))
    ]
    assert runs[0]["steps"] == max(p["step"] for p in points) + 1
    rows = example(mem, "kept_run", query_id=query_id)
    assert [r["p"]["id"] for r in rows] == [
        p["id"] for p in sorted(points, key=lambda p: (p["step"], p["seq"]))
    ]
    by_id = {p["id"]: p for p in points}
    for row in rows:
        assert row["q"]["id"] == query_id
        assert len(row["entities"]) == len(row["involves"]) >= 2
        assert sorted(r.end_node["id"] for r in row["replaced"]) == sorted(by_id[row["p"]["id"]]["replaced"])
    assert any(r["operation"] == "merge" and r["replaced"] for r in rows)
    assert example(mem, "kept_run", query_id="no-such-run") == []


def test_answer_chains_are_the_active_points_with_what_they_grew_from(mem: Memory) -> None:
    kept = mem.kept  # type: ignore[attr-defined]
    rows = example(mem, "answer_chains", query_id=kept.details.query_id)
    assert {r["point"].split(" v")[0] for r in rows} == {p["point"] for p in kept.details.points}
    steps = {(op["point"], op["version"]): op for s in kept.details.steps for op in s.operations}
    for row in rows:
        label, version = row["point"].split(" v")
        op = steps[(label, int(version))]
        assert row["operation"] == op["op"] and len(row["entities"]) >= 2 and row["chunks"]
        grew = {g.split(" ")[1] for g in row["grew_from"]}
        assert set(op["merged_from"]) <= grew  # a merged point lists the points it was merged from
        assert row["question"] == TWO_HOP


@pytest.fixture
def planted_clusters(mem: Memory):
    """A small CAM hierarchy above the real one (five unrelated passages grow only level-1 singletons):
    SIMILAR links from jpi#0, a level-1 cluster of jpi#0 and apa#0, a level-2 cluster over it and
    hank's real cluster, and a dissolved level-3 cluster that every query must ignore."""
    tag = uuid.uuid4().hex[:6]
    ids = {"c1": f"c1-planted-{tag}", "c2": f"c2-planted-{tag}", "c3": f"c3-dissolved-{tag}"}
    mem.driver.execute_query(
        "MATCH (jpi:Chunk {namespace: $ns, id: 'jpi#0'}), (apa:Chunk {namespace: $ns, id: 'apa#0'}), "
        "      (hank:Chunk {namespace: $ns, id: 'hank#0'}), (hk:Cluster {namespace: $ns})-[:HAS_MEMBER]->(hank) "
        "CREATE (apa)-[:SIMILAR {namespace: $ns, level: 0, weight: 0.7, planted: true}]->(jpi), "
        "       (hank)-[:SIMILAR {namespace: $ns, level: 0, weight: 0.4, planted: true}]->(jpi), "
        "       (c1:Cluster {namespace: $ns, id: $c1, level: 1, title: 'Psychology journals', dissolved: false}), "
        "       (c2:Cluster {namespace: $ns, id: $c2, level: 2, title: 'Psychology', dissolved: false}), "
        "       (c3:Cluster {namespace: $ns, id: $c3, level: 3, title: 'gone', dissolved: true}), "
        "       (c1)-[:HAS_MEMBER]->(jpi), (c1)-[:HAS_MEMBER]->(apa), (c2)-[:HAS_MEMBER]->(c1), "
        "       (c2)-[:HAS_MEMBER]->(hk), (c3)-[:HAS_MEMBER]->(c2)",
        ns=mem.namespace, **ids,
    )  # fmt: skip
    yield ids
    mem.driver.execute_query(
        "MATCH (k:Cluster {namespace: $ns}) WHERE k.id IN $ids DETACH DELETE k "
        "WITH 1 AS done MATCH (:Chunk {namespace: $ns})-[s:SIMILAR {planted: true}]-() DELETE s",
        ns=mem.namespace, ids=list(ids.values()),
    )  # fmt: skip


def test_cluster_path_to_top_climbs_from_the_chunk_to_root_clusters(mem: Memory, planted_clusters) -> None:
    edges = raw(mem, "MATCH (k:Cluster {namespace: $ns})-[:HAS_MEMBER]->(m) "
                     "WHERE NOT coalesce(k.dissolved, false) RETURN k.id AS parent, m.id AS child")  # fmt: skip
    parents = defaultdict(set)
    for edge in edges:
        parents[edge["child"]].add(edge["parent"])
    roots, frontier = set(), {"jpi#0"}
    while frontier:  # every ancestor without a (live) parent of its own is a top
        node = frontier.pop()
        for parent in parents[node]:
            (frontier.add(parent) if parents[parent] else roots.add(parent))
    assert (
        planted_clusters["c2"] in roots and len(roots) == 2
    )  # jpi's own level-1 cluster, and the planted top
    rows = example(mem, "cluster_path_to_top", chunk_id="jpi#0")
    assert {r["path"].start_node["id"] for r in rows} == roots
    for row in rows:
        nodes = row["path"].nodes
        assert nodes[-1]["id"] == "jpi#0" and row["chunk"] == JOURNAL
        levels = [n["level"] for n in reversed(nodes[:-1])]
        assert levels == list(range(1, len(levels) + 1))  # level by level, upwards
        assert row["top_level"] == levels[-1] and len(row["clusters_upwards"]) == len(levels)
    assert rows[0]["clusters_upwards"] == ["L1 Psychology journals", "L2 Psychology"]  # the top level first


def test_chunk_network_and_biggest_clusters(mem: Memory, planted_clusters) -> None:
    rows = example(mem, "chunk_network", chunk_id="jpi#0")
    assert [(r["neighbour_id"], r["weight"], r["shared_clusters"]) for r in rows] == [
        ("apa#0", 0.7, ["Psychology journals"]),  # strongest first, with the level-1 cluster they share
        ("hank#0", 0.4, []),
    ]
    clusters = example(mem, "biggest_clusters")
    members = {k["id"]: k["n"] for k in raw(mem, "MATCH (k:Cluster {namespace: $ns}) WHERE NOT coalesce(k.dissolved, false) "
                                                  "RETURN k.id AS id, COUNT { (k)-[:HAS_MEMBER]->() } AS n")}  # fmt: skip
    assert {c["id"]: c["members"] for c in clusters} == members
    assert planted_clusters["c3"] not in members and members[planted_clusters["c2"]] == 2
    assert [c["level"] for c in clusters] == sorted((c["level"] for c in clusters), reverse=True)
    assert clusters[0]["id"] == planted_clusters["c2"]


def test_every_caption_renders_text_on_the_memory(mem: Memory, planted_clusters) -> None:
    """Each label and relationship type in this memory captions as text from properties that exist
    (the table shows nodes the way the Browser style sheet captions them)."""
    from engramdb.platform.browser_style import captions

    styled = captions()
    nodes = raw(
        mem, "MATCH (n {namespace: $ns}) WITH labels(n)[0] AS label, collect(n)[0] AS n RETURN label, n"
    )
    rels = mem.driver.execute_query(  # records, not data(): that turns relationships into tuples
        "MATCH ({namespace: $ns})-[r]->() WITH type(r) AS kind, collect(r)[0] AS r RETURN kind, r",
        ns=mem.namespace,
    ).records
    assert {"Document", "Chunk", "Entity", "VerbPhrase", "Gist", "Query", "MemoryPoint", "Cluster",
            "Replica"} <= {n["label"] for n in nodes}  # fmt: skip
    for row in nodes:
        template = styled[f"node.{row['label']}"]
        fields = re.findall(r"\{([^{}]*)\}", template)
        assert fields and all(row["n"].get(f) is not None for f in fields), (row["label"], template)
    for row in rels:
        template = styled[f"relationship.{row['kind']}"]
        fields = re.findall(r"\{([^{}]*)\}", template)
        assert all(row["r"].get(f) is not None for f in fields), (row["kind"], template)
    record = mem.driver.execute_query(
        "MATCH (c:Chunk {namespace: $ns, id: 'jpi#0'}), (v:VerbPhrase {namespace: $ns})-[q:QA]->() "
        "RETURN c, q LIMIT 1", ns=mem.namespace).records[0]  # fmt: skip
    assert analyst.caption(record["c"]) == f"(Chunk: {JOURNAL} #0)"
    assert analyst.caption(record["q"]) == f"[QA: {record['q']['question']}]"


# --------------------------------------------------------------------------- safety


REFUSED = [
    ("CREATE (n:Hacked {namespace: $namespace}) RETURN n", "write clause (CREATE)"),
    ("MERGE (n:Entity {namespace: $namespace, id: 'x'}) RETURN n", "write clause (MERGE)"),
    ("MATCH (e:Entity {namespace: $namespace}) SET e.name = 'gone' RETURN count(e)", "write clause (SET)"),
    ("MATCH (e:Entity {namespace: $namespace}) REMOVE e.name RETURN count(e)", "write clause (REMOVE)"),
    ("MATCH (e:Entity {namespace: $namespace}) DETACH DELETE e", "write clause (DETACH DELETE)"),
    ("MATCH (e:Entity {namespace: $namespace}) FOREACH (x IN [1] | SET e.x = x)", "write clause (FOREACH)"),
    ("CALL () { CREATE (:Hacked) } RETURN 1", "write clause (CREATE)"),
    ("CALL db.createLabel('Hacked')", "write"),
    ("CREATE INDEX hacked IF NOT EXISTS FOR (n:Entity) ON (n.hacked)", "schema command (CREATE INDEX)"),
    ("DROP CONSTRAINT entity_key", "schema command (DROP CONSTRAINT)"),
    ("CALL dbms.listConfig() YIELD name RETURN name", "admin procedure CALL dbms.listConfig"),
    ("call DBMS.components()", "admin procedure CALL DBMS.components"),
    ("CALL `dbms`.`components`()", "admin procedure CALL dbms.components"),  # only the plan sees through
    ("SHOW USERS", "administration command (SHOW USERS)"),
    ("SHOW TRANSACTIONS", "administration command (SHOW TRANSACTIONS)"),
    ("TERMINATE TRANSACTIONS 'neo4j-transaction-1'", "administration command (TERMINATE TRANSACTIONS)"),
    ("CREATE USER mallory SET PASSWORD 'secret-password'", "administration command (CREATE USER)"),
    ("LOAD CSV FROM 'file:///etc/passwd' AS line RETURN line", "LOAD CSV"),
    ("load /* sneaky */ csv from 'file:///etc/hostname' AS line RETURN line", "LOAD CSV"),
    ("CALL db.stats.collect('QUERIES')", "procedure CALL db.stats.collect"),
]


@pytest.mark.parametrize(("query", "named"), REFUSED, ids=[q[:40] for q, _ in REFUSED])
def test_writes_schema_admin_and_load_csv_are_refused_and_nothing_changes(
    mem: Memory, query: str, named: str
) -> None:
    before = counts(mem)
    constraints = len(mem.driver.execute_query("SHOW CONSTRAINTS").records)
    with pytest.raises(QueryRefused) as info:
        analyst.run_cypher(mem.driver, query, {"namespace": mem.namespace})
    assert named in str(info.value) and "nothing was run or changed" in str(info.value)
    assert counts(mem) == before
    assert len(mem.driver.execute_query("SHOW CONSTRAINTS").records) == constraints
    assert (
        raw(mem, "MATCH (e:Entity {namespace: $ns}) WHERE e.name IS NULL OR e.name = 'gone' RETURN e") == []
    )


def test_the_read_transaction_itself_refuses_writes_that_slip_past_the_checks(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read mode is the real guarantee: with the lexical and plan checks switched off, Neo4j still refuses."""
    monkeypatch.setattr(analyst, "refusal", lambda text: None)
    monkeypatch.setattr(analyst, "_check_plan", lambda *args: None)
    before = counts(mem)
    with pytest.raises(QueryRefused, match=r"write clause \(MERGE\)"):
        analyst.run_cypher(
            mem.driver, "MERGE (n:Hacked {namespace: $namespace}) RETURN n", {"namespace": mem.namespace}
        )
    assert counts(mem) == before


def test_keywords_inside_strings_names_and_properties_are_not_refused(mem: Memory) -> None:
    result = analyst.run_cypher(
        mem.driver,
        "MATCH (e:Entity {namespace: $namespace}) WHERE e.name CONTAINS 'load csv' OR e.name = 'CREATE (x)' "
        "// a comment saying DELETE\nWITH count(e) AS n RETURN n, 'MERGE INTO' AS s, {set: 1}.set AS `create`",
        {"namespace": mem.namespace},
    )  # fmt: skip
    assert result.rows == [{"n": 0, "s": "MERGE INTO", "create": 1}]
    assert analyst.run_cypher(mem.driver, "SHOW INDEXES YIELD name RETURN count(*) AS n", {}).rows[0]["n"] > 5
    fulltext = analyst.run_cypher(
        mem.driver, "CALL db.index.fulltext.queryNodes('entity_search', 'Hank') YIELD node "
        "WHERE node.namespace = $namespace RETURN DISTINCT node.name AS name", {"namespace": mem.namespace},
    )  # fmt: skip
    assert {"name": "Hank Snow"} in fulltext.rows


def test_a_slow_cartesian_product_is_stopped_by_the_server_at_the_timeout(mem: Memory) -> None:
    query = (
        "MATCH (a), (b), (c) WHERE a.namespace = $namespace "
        "WITH a, b, c, range(1, 1000) AS xs UNWIND xs AS x WITH x WHERE x < 0 RETURN count(*) AS n"
    )
    with pytest.raises(QueryTimedOut, match=r"stopped by the server after 1 s \(transaction timeout\)"):
        analyst.run_cypher(mem.driver, query, {"namespace": mem.namespace}, timeout=1)
    running = mem.driver.execute_query(
        "SHOW TRANSACTIONS YIELD currentQuery, status RETURN currentQuery, status"
    )
    still = [r["status"] for r in running.records if "range(1, 1000)" in (r["currentQuery"] or "")]
    assert all(
        status.startswith("Terminated") for status in still
    )  # the server ended it, not just the client


def test_row_limit_truncates_and_says_so(mem: Memory) -> None:
    short = analyst.run_cypher(mem.driver, "UNWIND range(1, 500) AS i RETURN i", {}, limit=10)
    assert [r["i"] for r in short.rows] == list(range(1, 11)) and short.truncated
    whole = analyst.run_cypher(mem.driver, "UNWIND range(1, 500) AS i RETURN i", {}, limit=500)
    assert len(whole.rows) == 500 and not whole.truncated
    with pytest.raises(InputError, match="--limit"):
        analyst.run_cypher(mem.driver, "RETURN 1", {}, limit=0)


def test_parameters_are_passed_as_parameters_never_spliced(mem: Memory) -> None:
    hostile = "x'}) DETACH DELETE n // \" $namespace"
    before = counts(mem)
    params = analyst.parse_params(
        [f"v={hostile}", "n=12", "f=0.5", "b=true", "xs=[1, 2]", 'quoted="12"', "none=null"]
    )
    assert params == {"v": hostile, "n": 12, "f": 0.5, "b": True, "xs": [1, 2], "quoted": "12", "none": None}
    result = analyst.run_cypher(
        mem.driver, "RETURN $v AS v, $n + 1 AS n, $xs AS xs, $quoted AS q, $b AS b, $none AS none", params
    )
    assert result.rows == [{"v": hostile, "n": 13, "xs": [1, 2], "q": "12", "b": True, "none": None}]
    assert counts(mem) == before
    for bad, why in (
        ("noequals", "NAME=VALUE"),
        ("bad name=1", "NAME=VALUE"),
        ("namespace=x", "-n NAMESPACE"),
    ):
        with pytest.raises(InputError, match=why):
            analyst.parse_params([bad])
    with pytest.raises(InputError, match="given twice"):
        analyst.parse_params(["a=1", "a=2"])


def test_query_errors_are_clear(mem: Memory) -> None:
    with pytest.raises(InputError, match=r"parameters it was not given: pass --param missing=VALUE"):
        analyst.run_cypher(mem.driver, "RETURN $missing AS x", {})
    with pytest.raises(InputError, match="Cypher syntax error"):
        analyst.run_cypher(mem.driver, "MATCH (n RETURN n", {})
    with pytest.raises(InputError, match="empty"):
        analyst.run_cypher(mem.driver, "  // only a comment\n", {})
    with pytest.raises(InputError, match="no example query 'nope'; known: .*two_hop_paths"):
        analyst.example("nope")
    entry = analyst.example("two_hop_paths")
    with pytest.raises(
        InputError, match=r"needs name: e.g. --param name='Journal of Psychotherapy Integration'"
    ):
        analyst.example_params(entry, {})
    with pytest.raises(InputError, match="takes name, not chunk_id"):
        analyst.example_params(entry, {"name": "x", "chunk_id": "y"})


# --------------------------------------------------------------------------- the CLI


@pytest.fixture
def cli_env(mem: Memory) -> dict[str, str]:
    return {**cli_environment(mem.settings, mem.namespace), "COLUMNS": "200"}


def cli(env: dict[str, str], *args: str, input: str | None = None):
    return CliRunner().invoke(main, list(args), env=env, input=input, catch_exceptions=False)


def test_cli_runs_examples_as_a_table_or_json(cli_env, mem: Memory) -> None:
    listed = cli(cli_env, "cypher", "--list")
    assert listed.exit_code == 0 and all(e.name in listed.output for e in analyst.examples())
    table = cli(cli_env, "cypher", "--example", "two_hop_paths", "--param", f"name={JOURNAL}")
    assert table.exit_code == 0, table.output
    assert "G. Stanley Hall" in table.output and "graph columns not shown in the table: path" in table.output
    as_json = json.loads(
        cli(cli_env, "cypher", "-e", "two_hop_paths", "-p", f"name={JOURNAL}", "--json").output
    )
    assert as_json["columns"][-1] == "path" and as_json["params"] == {
        "name": JOURNAL,
        "namespace": mem.namespace,
    }
    path = as_json["rows"][0]["path"]
    assert [n["labels"] for n in path["nodes"]][:2] == [["Entity"], ["VerbPhrase"]]
    assert path["relationships"][1]["type"] == "QA" and "question" in path["relationships"][1]["properties"]
    missing = cli(cli_env, "cypher", "-e", "two_hop_paths")
    assert missing.exit_code == 1 and "needs name" in missing.output


def test_cli_refuses_writes_and_escapes_user_text(cli_env, mem: Memory) -> None:
    before = counts(mem)
    refused = cli(cli_env, "cypher", "MATCH (e:Entity {namespace: $namespace}) DETACH DELETE e")
    assert refused.exit_code == 1 and "refused a write clause (DETACH DELETE)" in refused.output
    assert counts(mem) == before
    markup = cli(cli_env, "cypher", "RETURN $v AS v", "--param", "v=[bold]x[/] [red]")
    assert markup.exit_code == 0 and "[bold]x[/] [red]" in markup.output
    piped = cli(
        cli_env, "cypher", "-", "--limit", "3", input="UNWIND range(1, 10) AS i RETURN i * 2 AS double"
    )
    assert piped.exit_code == 0 and "more rows exist" in piped.output and "6" in piped.output
    slow = cli(cli_env, "cypher", "--timeout", "1",
               "UNWIND range(1, 100000) AS a UNWIND range(1, 100000) AS b WITH a, b WHERE a * b < 0 RETURN count(*)")  # fmt: skip
    assert slow.exit_code == 1 and "stopped by the server after 1 s" in slow.output

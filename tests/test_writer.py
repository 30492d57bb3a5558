"""The writer keeps everything two reconciled mentions say, and reconciliation respects types.

Two local entities of one chunk can resolve to one node (a name and its alias
both extracted); their mention rows are merged, never overwritten. Entity ids
come from names, but clearly different kinds (a band and its song) and bare
surnames across documents do not merge.
"""

from __future__ import annotations

from engramdb.ingestion.documents import make_document
from engramdb.ingestion.gsw import GSW, Entity, QAPair, Role, VerbPhrase
from engramdb.ingestion.reconcile import EntityResolver, StoredEntity, entity_id, types_compatible
from engramdb.ingestion.writer import ChunkResult, build_rows, write_documents, write_rows

DYLAN_TEXT = "Bob Dylan, born Robert Zimmerman in Duluth, is a famous singer."


def dylan_gsw(first_type: str = "PERSON", second_type: str = "PERSON") -> GSW:
    """A reply naming the singer twice: by his stage name (alias: birth name) and by his birth name."""
    return GSW(
        entities=[
            Entity(id="e1", name="Bob Dylan", type=first_type, aliases=["Robert Zimmerman"],
                   roles=[Role(role="singer", states=["famous"])]),
            Entity(id="e2", name="Robert Zimmerman", type=second_type, aliases=["Zimmy"],
                   roles=[Role(role="newborn", states=["born in Duluth"])]),
            Entity(id="e3", name="Duluth", type="PLACE", roles=[Role(role="birthplace")]),
        ],
        verb_phrases=[VerbPhrase(id="v1", text="was born in")],
        qa_pairs=[
            QAPair(id="q1", verb_phrase_id="v1", question="Where was Bob Dylan born?",
                   question_entity_ids=["e1"], answer_entity_ids=["e3"]),
            QAPair(id="q2", verb_phrase_id="v1", question="Who was born in Duluth?",
                   question_entity_ids=["e3"], answer_entity_ids=["e2"]),
        ],
    )  # fmt: skip


def _rows(gsw: GSW):
    doc = make_document(DYLAN_TEXT, title="Bob Dylan", id="dylan")
    (chunk,) = doc.chunks()
    return doc, build_rows([doc], [ChunkResult(chunk, gsw)], EntityResolver(lambda keys: []))


def test_two_mentions_of_one_node_in_a_chunk_are_merged_not_overwritten() -> None:
    _, rows = _rows(dylan_gsw())
    dylan = [m for m in rows.mentions if m["surface"] == "Bob Dylan"]
    assert len(rows.mentions) == 2 and len(dylan) == 1  # Dylan and Duluth: one row per node
    row = dylan[0]
    assert row["roles"] == ["newborn", "singer"]
    assert row["states"] == ["born in Duluth", "famous"]
    assert row["aliases"] == ["Robert Zimmerman", "Zimmy"]
    assert row["alias_keys"] == ["bob dylan", "robert zimmerman", "zimmy"]
    (answer,) = [q for q in rows.qa_records if q.question == "Who was born in Duluth?"]
    assert answer.answer_entity_ids == [row["entity_id"]] and answer.answer_names == ["Bob Dylan"]


def test_the_merged_row_takes_the_first_specific_type() -> None:
    _, rows = _rows(dylan_gsw(first_type="THING", second_type="PERSON"))
    (row,) = [m for m in rows.mentions if m["surface"] == "Bob Dylan"]
    assert row["type"] == "PERSON" and row["roles"] == ["newborn", "singer"]


def test_the_merged_mention_reaches_the_graph(graph, driver) -> None:
    doc, rows = _rows(dylan_gsw())
    write_documents(graph, [doc])
    write_rows(graph, rows)
    records, _, _ = driver.execute_query(
        "MATCH (:Chunk {namespace: $ns})-[m:MENTIONS]->(e:Entity {namespace: $ns, name: 'Bob Dylan'}) "
        "RETURN m.roles AS m_roles, e.roles AS roles, e.states AS states, e.aliases AS aliases",
        ns=graph.namespace,
    )
    assert len(records) == 1
    assert sorted(records[0]["roles"]) == ["newborn", "singer"]
    assert sorted(records[0]["states"]) == ["born in Duluth", "famous"]
    assert sorted(records[0]["aliases"]) == ["Robert Zimmerman", "Zimmy"]


# ---------------------------------------------------------------------------- type-aware reconciliation


def test_type_table() -> None:
    assert not types_compatible("ORG", "WORK") and not types_compatible("PERSON", "PLACE")
    assert types_compatible("PLACE", "LOCATION") and types_compatible("DATE", "NUMBER")
    assert all(types_compatible("THING", t) for t in ("PERSON", "ORG", "PLACE", "WORK", "OTHER", "NORP"))


def test_a_band_and_its_song_stay_two_nodes_with_stable_ids() -> None:
    resolver = EntityResolver(lambda keys: [])
    resolver.prime(["iron maiden"])
    band, _ = resolver.resolve("Iron Maiden", (), "ORG", "band")
    song, _ = resolver.resolve("Iron Maiden", (), "WORK", "song")
    assert band == entity_id("iron maiden") and song == entity_id("iron maiden", "WORK")
    assert resolver.resolve("Iron Maiden", (), "ORG", "tour")[0] == band  # same kind still merges
    assert resolver.resolve("Iron Maiden", (), "SONG", "charts")[0] == song  # a synonym of WORK
    assert resolver.resolve("Iron Maiden", (), "THING", "misc")[0] == band  # generic: the first node


def test_stored_memory_still_resolves_and_is_type_checked() -> None:
    stored = [StoredEntity("djibouti", entity_id("djibouti"), ["PLACE"], "name"),
              StoredEntity("hank snow", entity_id("hank snow"), ["PERSON"], "name"),
              StoredEntity("snow", entity_id("hank snow"), ["PERSON"], "alias")]  # fmt: skip
    resolver = EntityResolver(lambda keys: [s for s in stored if s.key in keys])
    resolver.prime(["djibouti", "snow", "hank snow"])
    assert resolver.resolve("Djibouti", (), "LOCATION", "new")[0] == entity_id("djibouti")
    assert resolver.resolve("Djibouti", (), "ORG", "new")[0] == entity_id("djibouti", "ORG")
    assert resolver.resolve("Hank Snow", (), "PERSON", "new")[0] == entity_id("hank snow")
    # the stored one-word alias "snow" came from another document: it captures nothing
    assert resolver.resolve("snow", (), "THING", "weather")[0] == entity_id("snow")


def test_a_one_word_alias_joins_within_its_document_only() -> None:
    resolver = EntityResolver(lambda keys: [])
    hank, _ = resolver.resolve("Hank Snow", ["Snow"], "PERSON", "hank-snow")
    assert resolver.resolve("Snow", (), "PERSON", "hank-snow")[0] == hank  # later chunk, same document
    assert resolver.resolve("Snow", (), "THING", "blizzard")[0] != hank  # another document
    assert resolver.resolve("Snow", (), "PERSON", "discography")[0] != hank
    # a multi-word alias still joins across documents
    singer, _ = resolver.resolve("Clarence Eugene Snow", ["Hank Snow"], "PERSON", "discography")
    assert singer == hank


def test_an_alias_of_another_kind_does_not_capture_an_entity() -> None:
    resolver = EntityResolver(lambda keys: [])
    band, _ = resolver.resolve("Iron Maiden", ["The Iron Maiden Band"], "ORG", "band")
    film, _ = resolver.resolve("Iron Maiden Band", (), "WORK", "documentary")  # a film of that title
    assert film != band
    assert resolver.resolve("Iron Maiden Band", (), "ORG", "fans")[0] == band  # its own kind joins by alias
    assert resolver.resolve("Iron Maiden Band", (), "THING", "fans")[0] == film  # generic: that name's node

"""Which entities a hop is about: names the question spells, matched to memory's entities."""

from __future__ import annotations

import pytest

from engramdb.retrieval.hop_retrieval import name_spans, name_variant_forward, named_entities
from engramdb.retrieval.results import QACandidate


@pytest.mark.parametrize(
    ("question", "spans"),
    [
        ("What country was Henrik Ibsen a citizen of?", ["Henrik Ibsen"]),
        ("Who published Journal of Psychotherapy Integration?", ["Journal of Psychotherapy Integration"]),
        ('The director of the romantic comedy "Big Stone Gap" is based in what New York city?',
         ["Big Stone Gap", "New York"]),
        ("In May 1990, who won the US Open?", ["US Open"]),  # a date is no subject
        ("where was the first pan african conference held", []),
    ],
)  # fmt: skip
def test_name_spans(question: str, spans: list[str]) -> None:
    assert name_spans(question) == spans


def _row(entity_id: str, name: str, entity_type: str = "PERSON", aliases: tuple[str, ...] = ()) -> dict:
    return {"id": entity_id, "name": name, "aliases": list(aliases), "type": entity_type}


def test_subjects_are_the_longest_names_the_question_spells() -> None:
    found = [_row("e1", "Big Eyes", "WORK"), _row("e2", "Eyes", "WORK"), _row("e3", "Director", "THING")]
    named, unmatched = named_entities("Who is the director of Big Eyes?", found)
    assert named == {"e1": "Big Eyes"} and not unmatched  # not "Eyes", and "director" is no name here
    named, _ = named_entities("Where was Ibsen born?", [_row("e4", "Henrik Ibsen")])
    assert named == {"e4": "Henrik Ibsen"}  # a surname names the person
    named, _ = named_entities("When did italy enter the First World War?", [_row("e5", "Italy", "PLACE")])
    assert named == {"e5": "Italy"}  # a place is a name in any case


def test_a_common_noun_the_question_asks_for_is_no_subject() -> None:
    # memory may hold a badly extracted place called "River" or "State": the question's own kind
    # noun, after a wh-word or an article, still names nothing
    found = [_row("e1", "River", "PLACE"), _row("e2", "State", "ORG"), _row("e3", "India", "PLACE")]
    named, _ = named_entities("Which river is located in India?", found)
    assert named == {"e3": "India"}
    named, _ = named_entities("What is the state bordering india?", found)
    assert named == {"e3": "India"}
    # written with its capital it is a name again
    named, _ = named_entities("Which country is River in?", found)
    assert named == {"e1": "River"}


def test_a_question_naming_only_what_memory_lacks_is_unmatched() -> None:
    named, unmatched = named_entities("Who directed Tessarine Nights?", [_row("e1", "Tim Burton")])
    assert named == {} and unmatched
    assert named_entities("who directed it?", [_row("e1", "Tim Burton")]) == ({}, False)


@pytest.mark.parametrize(
    ("question", "subject", "direction"),
    [
        ("When was Charles Reser Frank born?", "Charles Frank", "forward"),
        ("When was David Ross Lederman born?", "D. Ross Lederman", "forward"),
        ("What was Scott Alexander Young?", "Scott Alexander", "unanchored"),  # another surname
        ("When was Frank Launder born?", "Charles Frank", "unanchored"),
    ],
)
def test_a_longer_form_of_the_subjects_name_anchors_a_pair(
    question: str, subject: str, direction: str
) -> None:
    pair = QACandidate("q", question, ("a",), ("A",), ("DATE",), ("e9",), "d", "d#0", direction="unanchored")
    assert name_variant_forward(pair, [subject]).direction == direction

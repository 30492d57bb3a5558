"""Answer types: what a (sub-)question asks for, how stored answers fit it, which answers may feed a hop."""

from __future__ import annotations

import pytest

from engramdb.retrieval.answer_types import (
    FITS,
    WRONG,
    can_feed_next_hop,
    country_of,
    expected_type,
    fit,
)


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("When was Hank Snow born?", "date"),
        ("In what year was <ENTITY_Q1> born?", "date"),
        ("The author of Brand was born in what year?", "date"),
        ("How many stores are in Tennessee?", "number"),
        ("What is the population of <ENTITY_Q1>?", "number"),
        ("Who is the author of Brand?", "agent"),
        ("Where was Marie Curie born?", "place"),
        ("What country was <ENTITY_Q1> a citizen of?", "country"),
        ("In which country is Warsaw located?", "country"),
        ("What nationality is the director of Big Eyes?", "nationality"),
        ("What is the capital of Poland?", "city"),
        ("Which city is the birthplace of Tim Burton?", "city"),
        ("What company published Journal of Psychotherapy Integration?", "org"),
        ("Which film was directed by Tim Burton?", "work"),
        ("What language is Brand written in?", "language"),
    ],
)  # fmt: skip
def test_expected_kind_comes_from_the_wh_word_and_its_noun(question: str, kind: str) -> None:
    found = expected_type(question)
    assert found is not None and found.kind == kind


@pytest.mark.parametrize("question", ["Name the river.", "What is Brand?", "Why did Rome fall?"])
def test_questions_that_do_not_say_expect_nothing(question: str) -> None:
    assert expected_type(question) is None
    assert fit(expected_type(question), "anything", "THING") == FITS


def test_a_country_question_prefers_a_country_over_a_nationality_or_a_city() -> None:
    country = expected_type("What country was Henrik Ibsen a citizen of?")
    assert fit(country, "Norway", "PLACE") == FITS
    assert fit(country, "Norwegian", "NORP") < FITS  # usable once turned into its country
    assert fit(country, "Warsaw", "PLACE") < fit(country, "Norwegian", "NORP")
    assert fit(country, "1865", "DATE") == WRONG
    assert country_of("Norwegian") == "Norway" and country_of("Poland") == "Poland"
    assert country_of("Warsaw") is None


def test_clear_category_errors_cost_most() -> None:
    who = expected_type("Who is the author of Brand?")
    when = expected_type("When was Brand written?")
    assert fit(who, "Henrik Ibsen", "PERSON") == FITS
    assert fit(who, "1865", "DATE") == WRONG and fit(when, "Henrik Ibsen", "PERSON") == WRONG
    assert fit(when, "24 March 1867", "THING") == FITS  # a date by its look, whatever its type
    assert WRONG < fit(who, "play", "THING") < FITS
    # an amount in words is no agent, however it is capitalised; a band named with one is
    assert fit(who, "Four", "THING") == WRONG and fit(who, "twenty-one", "THING") == WRONG
    assert fit(who, "One Direction", "ORG") == FITS
    assert fit(expected_type("How many albums did they release?"), "Four", "THING") == FITS


@pytest.mark.parametrize(
    ("name", "entity_type", "feeds"),
    [("Henrik Ibsen", "PERSON", True), ("Warsaw", "PLACE", True), ("the Church of England", "ORG", True),
     ("1865", "DATE", False), ("24 March 1867", "THING", False), ("1,200", "NUMBER", False),
     ("play", "THING", False), ("verse tragedy", "THING", False), ("", "PERSON", False),
     ("Four", "THING", False), ("two hundred", "THING", False), ("Seven", "WORK", True),
     ("One Direction", "THING", True)],
)  # fmt: skip
def test_only_entities_feed_a_later_hop(name: str, entity_type: str, feeds: bool) -> None:
    assert can_feed_next_hop(name, entity_type) is feeds

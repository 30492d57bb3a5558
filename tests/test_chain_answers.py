"""Offline answers of comparison questions: from each option's best chain to an option, or yes / no."""

from __future__ import annotations

import pytest

from engramdb.retrieval.answering import NA, OfflineAnswerer, asked_form, compare, date_key, number_value
from engramdb.retrieval.chain.strategy import reading_units
from engramdb.retrieval.decomposition import Comparison
from engramdb.retrieval.results import Chain, ChainStep, QACandidate


def chain(answer: str, score: float = 0.8) -> Chain:
    qa = QACandidate(
        qa_id=f"q-{answer}", question="When was it released?", answer_ids=(f"id-{answer}",),
        answer_names=(answer,), answer_types=("DATE",), question_entity_ids=("id-x",), doc_id="d", chunk_id="d#0",
    )  # fmt: skip
    return Chain(steps=(ChainStep("q", qa, f"id-{answer}", answer, score, 1),), score=score)


@pytest.mark.parametrize(
    ("text", "key"),
    [("24 March 1867", (1867, 3, 24)), ("1865", (1865, 0, 0)), ("May 9, 1914", (1914, 5, 9)),
     ("c. 300 BC", (-300, 0, 0)), ("Henrik Ibsen", None)],
)  # fmt: skip
def test_dates_are_read_into_sortable_keys(text: str, key: tuple[int, int, int] | None) -> None:
    assert date_key(text) == key


def test_amounts_are_read_with_their_scale() -> None:
    assert number_value("1,200 stores") == 1200 and number_value("3.5 million") == 3_500_000
    assert number_value("none") is None


def test_dates_pick_the_earliest_or_latest_option() -> None:
    options = ("Big Eyes", "Ed Wood")
    finals = [[chain("December 25, 2014")], [chain("September 30, 1994", 0.6)]]
    assert compare(Comparison("earliest", options), finals) == ("Ed Wood", 0.6)  # the weakest chain's score
    assert compare(Comparison("latest", options), finals)[0] == "Big Eyes"
    assert compare(Comparison("largest", ("A", "B")), [[chain("120 m")], [chain("95 m")]])[0] == "A"


def test_a_date_comparison_uses_each_sides_best_dated_chain() -> None:
    """ "When was X born?" may rank a career date first; only a date compares."""
    career = [chain("a full feature director", 0.52), chain("December 12, 1894", 0.44)]
    assert compare(
        Comparison("earliest", ("Howard Morris", "D. Ross Lederman")), [[chain("September 4, 1919")], career]
    ) == (
        "D. Ross Lederman",
        0.44,
    )
    assert date_key("late 1930s") == (1930, 0, 0)


def test_same_and_both_answer_yes_or_no() -> None:
    burton = [[chain("Tim Burton")], [chain("Tim Burton")]]
    assert compare(Comparison("same", ("Big Eyes", "Ed Wood")), burton)[0] == "yes"
    assert (
        compare(
            Comparison("same", ("Big Eyes", "Rushmore")), [[chain("Tim Burton")], [chain("Wes Anderson")]]
        )[0]
        == "no"
    )
    americans = [[chain("American")], [chain("United States")]]  # a nationality and its country agree
    assert compare(Comparison("both", ("Tim Burton", "Wes Anderson"), "American"), americans)[0] == "yes"


def test_an_undecidable_or_weak_comparison_is_na() -> None:
    options = ("Big Eyes", "Ed Wood")
    assert compare(Comparison("earliest", options), [[chain("2014")], []]) is None  # one option found nothing
    assert (
        compare(Comparison("earliest", options), [[chain("2014")], [chain("Tim Burton")]]) is None
    )  # no date
    assert compare(Comparison("earliest", options), [[chain("1994")], [chain("1994")]]) is None  # a tie
    weak = OfflineAnswerer(0.7).answer_comparison(
        Comparison("earliest", options), [[chain("2014", 0.5)], [chain("1994")]]
    )
    assert weak.text == NA and weak.supported is False


def test_a_question_asking_for_a_year_gets_the_year_of_a_full_date() -> None:
    answerer = OfflineAnswerer(0.1)
    full = [chain("December 11, 1998")]
    assert answerer.answer("In what year was Rushmore released?", full, []).text == "1998"
    assert answerer.answer("When was Rushmore released?", full, []).text == "December 11, 1998"
    assert asked_form("Which year did Rome fall?", "476 AD") == "476 AD"
    assert asked_form("What year was it built?", "between 1990 and 1995") == "between 1990 and 1995"
    assert asked_form("What year was it built?", "Paris") == "Paris"


def _step(qid: str, question: str, answer: str, chunk: str) -> ChainStep:
    qa = QACandidate(
        qa_id=qid, question=question, answer_ids=(f"id-{answer}",), answer_names=(answer,),
        answer_types=("THING",), question_entity_ids=("id-x",), doc_id="d", chunk_id=chunk,
    )  # fmt: skip
    return ChainStep(question, qa, f"id-{answer}", answer, 0.9, 1)


def test_the_lead_holds_the_best_chain_and_the_alternatives_from_its_first_hop() -> None:
    """Beam search grows several chains from one first step, so the same step object sits in the
    best chain and in later ones: the lead (what comes before any passage) runs from the best
    chain, each pair followed by its source sentence, to the later chain's repeat of that step;
    a chain sharing nothing with the best one stays out of it."""
    first = _step("q1", "What country is Manchuria in?", "Japan", "c1")
    best = Chain((first, _step("q2", "When did Japan invade Manchuria?", "1931", "c2")), 0.9)
    sibling = Chain((first, _step("q3", "When did Japan seize Manchuria?", "September 1931", "c3")), 0.6)
    apart = Chain((_step("q4", "Who ruled Manchukuo?", "Puyi", "c4"),), 0.5)
    rows = {
        "c1": {"text": "Manchuria was held by Japan."},
        "c2": {"text": "Japan invaded Manchuria in 1931."},
        "c3": {"text": "Japan seized Manchuria in September 1931."},
        "c4": {"text": "Puyi ruled Manchukuo."},
    }
    units, lead = reading_units([best, sibling, apart], 1, rows, sentences=True)
    assert [u.kind for u in units] == ["qa_pair", "sentence"] * 5
    assert [u.text for u in units[:4:2]] == ["Q: What country is Manchuria in? A: Japan",
                                           "Q: When did Japan invade Manchuria? A: 1931"]  # fmt: skip
    assert lead == 6  # through the sibling's repeat of the first hop, before its own second hop
    assert "Puyi" not in " ".join(u.text for u in units[:lead])
    units, lead = reading_units([best, sibling, apart], 3, rows, sentences=False)  # three sequences
    assert lead == len(units) == 5

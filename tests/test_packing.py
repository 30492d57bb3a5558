"""The packer (retrieval/packing.py) as properties: within budget, no repeats, whole sentences, order kept."""

from __future__ import annotations

import random

import pytest

from engramdb.ingestion.documents import split_sentences
from engramdb.platform.embedders import count_tokens
from engramdb.retrieval.evidence import text_tokens
from engramdb.retrieval.packing import ELISION, pack, split_lead, turn_order, with_reserve
from engramdb.retrieval.results import Evidence

SENTENCES = [
    "Marie Curie was born in Warsaw in 1867.",
    "She moved to Paris in 1891 to study physics.",
    "Warsaw is the capital of Poland.",
    "The Vistula river flows through Warsaw.",
    "Pierre Curie was a French physicist.",
    "The Nobel Prize in Physics 1903 went to the Curies and Henri Becquerel.",
    "Poland joined the European Union in 2004.",
    "The Sorbonne is a university in Paris.",
    "Radium was discovered in 1898.",
    "Krakow was the capital of Poland before Warsaw.",
]


def _passage(i: int, sentences: list[str], title: str = "") -> Evidence:
    title = title or f"Doc {i}"
    return Evidence("passage", f"c{i}", f"{title}\n{' '.join(sentences)}", 1.0 / (i + 1), f"d{i}", (f"c{i}",),
                    {"title": title})  # fmt: skip


def _pair(i: int, question: str, answer: str) -> Evidence:
    return Evidence("qa_pair", f"q{i}", f"Q: {question} A: {answer}", 0.5, "d0", ("c0",), {})


def _random_units(rng: random.Random) -> list[Evidence]:
    units: list[Evidence] = []
    for i in range(rng.randint(1, 8)):
        if rng.random() < 0.4:
            units.append(_pair(i, rng.choice(["Where was Marie Curie born?", "What is the capital of Poland?"]),
                               rng.choice(["Warsaw", "Paris"])))  # fmt: skip
        else:
            units.append(_passage(i, rng.sample(SENTENCES, rng.randint(1, 6))))
    return units


@pytest.mark.parametrize("seed", range(40))
def test_packed_evidence_keeps_every_promise(seed: int) -> None:
    rng = random.Random(seed)
    units = _random_units(rng)
    budget = rng.choice([16, 24, 40, 64, 128, 256])
    packed = pack(units, budget, focus=["Where was Marie Curie born?"])
    # never over the budget
    assert count_tokens([e.text for e in packed]) <= budget
    # never the same text twice, nor a unit inside another
    flat = [" ".join(e.text.lower().split()) for e in packed]
    for i, a in enumerate(flat):
        for j, b in enumerate(flat):
            assert i == j or a not in b
    # never half a sentence: every piece of a kept passage is a whole sentence of the original
    originals = {u.id: u for u in units}
    for e in packed:
        source = originals[e.id]
        if e.kind == "passage":
            body = e.text.split("\n", 1)[1]
            original_sentences = split_sentences(source.text.split("\n", 1)[1])
            for piece in body.split(ELISION):
                for sentence in split_sentences(piece):
                    assert sentence in original_sentences
        else:
            assert e.text == source.text
    # the ranking's order is kept
    order = [u.id for u in units]
    assert [order.index(e.id) for e in packed] == sorted(order.index(e.id) for e in packed)


def test_a_passage_that_does_not_fit_keeps_its_best_sentences_and_title() -> None:
    passage = _passage(0, SENTENCES[:6], title="Marie Curie")
    (short,) = pack([passage], 30, focus=["Where was Marie Curie born?"])
    assert short.text.startswith("Marie Curie\n") and "born in Warsaw in 1867" in short.text
    assert short.metadata.get("shortened") is True and count_tokens([short.text]) <= 30


def test_a_sentence_already_given_is_not_repeated_inside_a_passage() -> None:
    sentence = Evidence("sentence", "q1#sentence", SENTENCES[0], 0.5, "d0", ("c0",), {})
    passage = _passage(0, SENTENCES[:3])
    packed = pack([sentence, passage], 500)
    assert [e.kind for e in packed] == ["sentence", "passage"]
    assert SENTENCES[0] not in packed[1].text and SENTENCES[1] in packed[1].text


def test_a_summary_does_not_repeat_a_sentence_already_given_even_clipped() -> None:
    """A cluster summary quotes its members' lead sentences, clipped with "...": whatever of them the
    evidence already holds is left out of the summary, whole or clipped."""
    passage = _passage(0, SENTENCES[:3])
    clipped = SENTENCES[1][:25] + "..."
    summary = Evidence(
        "cluster", "k1", f"{SENTENCES[0]} {clipped} {SENTENCES[4]}", 0.5, "d1", ("c0", "c4"), {}
    )
    packed = pack([passage, summary], 500)
    assert [e.kind for e in packed] == ["passage", "cluster"]
    assert packed[1].text == SENTENCES[4]
    alone = pack([summary], 500)  # nothing given before it: the summary stays whole
    assert alone[0].text == summary.text


def test_a_shortened_memory_point_keeps_each_answer_with_its_question() -> None:
    facts = [
        ("When was Marie Curie born?", "7 November 1867."),
        ("Where was Marie Curie born?", "Warsaw."),
        ("When did Pierre Curie die?", "19 April 1906."),
        ("Who discovered radium?", "Marie Curie, Pierre Curie."),
    ]
    text = " ".join(f"{q} {a}" for q, a in facts)
    point = Evidence("memory_point", "p1", text, 0.9, "d0", ("c0",), {})
    room = count_tokens([" ".join(facts[0])]) + count_tokens([" ".join(facts[2])]) + 4  # two facts, one mark
    (packed,) = pack([point], room, focus=["When did the husband of Marie Curie die?"])
    kept = [f for f in facts if f[0] in packed.text]
    assert 1 <= len(kept) < len(facts)
    for question, answer in facts:  # never an answer without its question ("1906. … Warsaw.")
        assert (f"{question} {answer}" in packed.text) == (question in packed.text) == (answer in packed.text)


def test_a_restatement_adds_nothing_and_is_skipped() -> None:
    passage = _passage(0, SENTENCES[:2])
    gist = Evidence("gist", "g0", "Marie Curie was born in Warsaw in 1867; she moved to Paris in 1891.",
                    0.9, "d0", ("c0",), {})  # fmt: skip
    assert [e.kind for e in pack([passage, gist], 500)] == ["passage"]


def test_with_nothing_of_its_own_a_strategy_packs_plain_passages() -> None:
    passages = [_passage(i, SENTENCES[i : i + 3]) for i in range(5)]
    packed = pack(passages, 80)
    assert packed and all(e.kind == "passage" for e in packed)
    assert packed[0].id == "c0" and count_tokens([e.text for e in packed]) <= 80


def test_the_surest_units_lead_and_the_rest_takes_turns_with_passages() -> None:
    """A strategy's surest group leads whatever its size; compact units after it join only within
    half the budget; everything after that is left to alternate with similarity's passages."""
    pairs = [_pair(i, f"Who directed film number {i} of the festival?", f"Director {i}") for i in range(8)]
    sizes = text_tokens([p.text for p in pairs])
    first, rest = split_lead(pairs, 64, lead=2)
    assert first[:2] == pairs[:2] and first + rest == pairs
    assert sum(sizes[: len(first)]) <= 32 < sum(sizes[: len(first) + 1])
    first, rest = split_lead(pairs, 16, lead=3)  # the surest group leads even past the share
    assert first == pairs[:3] and rest == pairs[3:]
    passage = _passage(9, SENTENCES[:2])
    first, rest = split_lead([pairs[0], passage, pairs[1]], 512, lead=1)  # a passage ends the lead
    assert first == [pairs[0]] and rest == [passage, pairs[1]]
    first, rest = split_lead([pairs[0], passage, pairs[1]], 512, lead=None)  # no lead: all compact first
    assert first == [pairs[0], pairs[1]] and rest == [passage]


def test_a_dense_share_lets_the_surest_passages_by_similarity_fill_it_before_the_turns() -> None:
    """Cluster's members are passages like dense search's: with a share of the budget, similarity's
    first passages fill it whole (within the room the leading units leave), and only then do the
    strategy's own passages take turns with similarity's others."""
    found = [_passage(i, SENTENCES[i : i + 2]) for i in range(5)]
    own = [_passage(10 + i, SENTENCES[i + 5 : i + 7]) for i in range(3)]
    size = text_tokens([found[0].text, found[1].text])
    ids = lambda units: [u.id for u in units]  # noqa: E731
    assert ids(turn_order([], found, own, 512)) == ["c0", "c10", "c1", "c11", "c2", "c12", "c3", "c4"]
    budget = 2 * (size[0] + size[1])  # half of it holds the first two passages and not the third
    assert ids(turn_order([], found, own, budget, 0.5)) == ["c0", "c1", "c2", "c10", "c3", "c11", "c4", "c12"]
    lead = [_pair(0, "Where was Marie Curie born?", "Warsaw")]
    # the leading units come first and take their room out of the share: one passage fits in it now
    lead_size = text_tokens([lead[0].text])[0]
    led = turn_order(lead, found, own, budget + lead_size - size[1], 0.5)
    assert ids(led)[:4] == ["q0", "c0", "c1", "c10"]
    assert turn_order(lead, found, own, budget, 0.0) == [lead[0], *turn_order([], found, own, budget)]


def _fact(i: int, text: str) -> Evidence:
    return Evidence("fact", f"fact:{i}", text, 0.7, "d9", ("c9",), {})


def test_reserved_facts_fill_the_room_where_a_passage_would_be_cut() -> None:
    first = _passage(0, SENTENCES[:2], "Marie Curie")
    second = _passage(1, SENTENCES[2:8], "Warsaw")
    facts = [
        _fact(0, "Marie Curie was born in Warsaw."),  # says nothing the first passage does not
        _fact(1, "Marie Curie won a Nobel Prize in Chemistry."),
        _fact(2, "Krakow lies on the Vistula."),
    ]
    order, focus = [first, second], ["Where was Marie Curie born?"]
    budget = text_tokens([first.text])[0] + 30
    packed = pack(order, budget, focus)
    assert [e.id for e in packed] == ["c0", "c1"] and packed[1].metadata.get("shortened")
    filled = with_reserve(order, packed, facts, budget, focus)
    # the whole passage stays first, the new facts come whole where the fragment was, within the budget
    assert [e.id for e in filled][:3] == ["c0", "fact:1", "fact:2"]
    assert [e.text for e in filled[1:3]] == [facts[1].text, facts[2].text]
    assert count_tokens([e.text for e in filled]) <= budget


def test_reserved_facts_change_nothing_when_every_unit_fits_whole() -> None:
    order = [_passage(0, SENTENCES[:2]), _passage(1, SENTENCES[2:4])]
    packed = pack(order, 512, ["Where was Marie Curie born?"])
    assert not any(e.metadata.get("shortened") for e in packed)
    facts = [_fact(0, "Marie Curie was born in Warsaw.")]
    assert with_reserve(order, packed, facts, 512, ["Where was Marie Curie born?"]) == packed
    assert with_reserve(order, packed, [], 512, []) == packed

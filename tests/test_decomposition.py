"""Question decomposition: validation, gold (MuSiQue) conversion, the LLM parser and the offline rules."""

from __future__ import annotations

import re

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from engramdb.platform.errors import InputError
from engramdb.retrieval.decomposition import (
    MAX_HOPS,
    PLACEHOLDER,
    Comparison,
    Decomposition,
    DecompositionError,
    LLMDecomposer,
    OfflineDecomposer,
    from_musique,
    gold_question,
    make_decomposition,
    parse_decomposition,
)

# --------------------------------------------------------------------------- the data type


def test_make_decomposition_validates_and_reports_placeholders() -> None:
    dec = make_decomposition(
        [["  Who directed Big Eyes? ", "Who is the spouse of <ENTITY_Q1>?"], ["When was Ed Wood released?"]]
    )
    assert dec.source == "given"
    assert dec.sequences == (
        ("Who directed Big Eyes?", "Who is the spouse of <ENTITY_Q1>?"),
        ("When was Ed Wood released?",),
    )
    assert dec.placeholders(0, 0) == []
    assert dec.placeholders(0, 1) == [1]
    assert dec.hops == 2
    assert PLACEHOLDER.findall("between <ENTITY_Q1> and <ENTITY_Q12>") == ["1", "12"]


def test_placeholders_in_order_without_repeats() -> None:
    dec = make_decomposition([["A?", "B?", "Is <ENTITY_Q2> older than <ENTITY_Q1> or <ENTITY_Q2>?"]])
    assert dec.placeholders(0, 2) == [2, 1]


@pytest.mark.parametrize(
    ("sequences", "reason"),
    [
        ([], "at least one sequence"),
        ([[]], "sequence 1 is empty"),
        ([["Who?"], ["   "]], "sequence 2, step 1: empty sub-question"),
        ([["Where was <ENTITY_Q1> born?"]], "sequence 1, step 1: <ENTITY_Q1> refers to itself"),
        ([["Who?", "What is <ENTITY_Q3>?"]], "refers to step 3, which does not exist"),
        ([["Who?", "What?", "Why <ENTITY_Q3>?"]], "sequence 1, step 3: <ENTITY_Q3> refers to itself"),
        ([["Who?", "When was <ENTITY_Q0> born?"]], "placeholders are 1-based"),
        ([["Who?", "When was <ENTITY_1> born?"]], "malformed placeholder"),
        ([["Who?", "When was ENTITY_Q1 born?"]], "malformed placeholder"),
        (["Who directed Big Eyes?"], "sequence 1 must be a list"),
        ("Who directed Big Eyes?", "must be a list of lists"),
        ([["Who?", 3]], "sequence 1, step 2: expected a string, got int"),
    ],
)
def test_invalid_sequences_are_rejected_with_reason(sequences, reason) -> None:
    with pytest.raises(DecompositionError, match=re.escape(reason)):
        make_decomposition(sequences)


def test_decomposition_is_validated_on_construction_and_is_an_input_error() -> None:
    with pytest.raises(DecompositionError, match="refers to"):
        Decomposition((("Who is <ENTITY_Q2>?", "What?"),), "given")
    with pytest.raises(DecompositionError, match="unknown decomposition source"):
        Decomposition((("Who?",),), "guess")
    assert issubclass(DecompositionError, InputError)


# --------------------------------------------------------------------------- gold


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Hello Love >> performer", "Who is the performer of Hello Love?"),
        ("#1 >> country of citizenship", "What country is <ENTITY_Q1> a citizen of?"),
        (
            "Johnnycake, West Virginia >> located in the administrative territorial entity",
            "In which administrative territorial entity is Johnnycake, West Virginia located?",
        ),
        ("Bubye River >> country", "What country is Bubye River in?"),
        ("#2 >> place of birth", "Where was <ENTITY_Q2> born?"),
        ("#1 >> spouse", "Who is the spouse of <ENTITY_Q1>?"),
        ("#1 >> member of political party", "What political party is <ENTITY_Q1> a member of?"),
        ("#2 >> instance of", "What is <ENTITY_Q2> an instance of?"),
        ("Siege of Cassel >> located in or next to body of water",
         "What body of water is Siege of Cassel located in or next to?"),
        (
            "Midway (near Pleasant Plains), #2 , #1 >> country",
            "What country is Midway (near Pleasant Plains), <ENTITY_Q2>, <ENTITY_Q1> in?",
        ),
        ("Some Band >> drummer's favourite colour", "What is the drummer's favourite colour of Some Band?"),
        ("what was #1 's currency before the euro", "What was <ENTITY_Q1>'s currency before the euro?"),
        ("Who was in charge of #2 ?", "Who was in charge of <ENTITY_Q2>?"),
    ],
)  # fmt: skip
def test_gold_steps_become_natural_questions(raw, expected) -> None:
    assert gold_question(raw) == expected


def test_all_musique_gold_decompositions_convert(musique_questions: list[dict]) -> None:
    items = musique_questions
    assert len(items) == 50
    for item in items:
        dec = from_musique(item["question_decomposition"])
        assert dec.source == "gold"
        assert len(dec.sequences) == 1
        assert len(dec.sequences[0]) == len(item["question_decomposition"])
        for j, question in enumerate(dec.sequences[0]):
            assert "#" not in question and ">>" not in question, question
            assert all(n <= j for n in dec.placeholders(0, j))
    # every multi-hop gold chain refers back at least once
    assert all(
        any(from_musique(i["question_decomposition"]).placeholders(0, j) for j in range(1, 3))
        for i in items
        if len(i["question_decomposition"]) > 1
    )


def test_gold_with_bad_shape_is_rejected() -> None:
    with pytest.raises(DecompositionError, match="non-empty list"):
        from_musique([])
    with pytest.raises(DecompositionError, match="gold step 2"):
        from_musique([{"question": "Brand >> author"}, {"answer": "Norway"}])
    with pytest.raises(
        DecompositionError, match=re.escape("step 1: <ENTITY_Q2> refers to a later step (step 2)")
    ):
        from_musique([{"question": "#2 >> author"}, {"question": "Brand >> author"}])


# --------------------------------------------------------------------------- LLM


CHAIN_REPLY = """```json
{
  "sequences": [
    ["Who is the director of Big Eyes?", "Who is the spouse of <ENTITY_Q1>?"]
  ]
}
```"""

COMPARISON_REPLY = (
    '{"sequences": [["Who directed Big Eyes?", "When was <ENTITY_Q1> born?"], '
    '["Who directed Ed Wood?", "When was <ENTITY_Q1> born?"]]}'
)


def test_llm_decomposer_chain_with_fenced_json() -> None:
    decomposer = LLMDecomposer(FakeListChatModel(responses=[CHAIN_REPLY]))
    dec = decomposer.decompose("Who is the spouse of the director of Big Eyes?")
    assert dec.source == "llm"
    assert dec.sequences == (("Who is the director of Big Eyes?", "Who is the spouse of <ENTITY_Q1>?"),)
    assert dec.placeholders(0, 1) == [1]
    input_tokens, output_tokens = decomposer.last_usage
    assert input_tokens > 100 and output_tokens == len(CHAIN_REPLY) // 4


def test_llm_decomposer_parallel_sequences() -> None:
    decomposer = LLMDecomposer(FakeListChatModel(responses=[COMPARISON_REPLY]))
    dec = decomposer.decompose("Which film has the director born earlier, Big Eyes or Ed Wood?")
    assert len(dec.sequences) == 2
    assert dec.sequences[1] == ("Who directed Ed Wood?", "When was <ENTITY_Q1> born?")
    assert [dec.placeholders(i, 1) for i in range(2)] == [[1], [1]]


def test_prompt_asks_for_our_json_shape() -> None:
    messages = LLMDecomposer(FakeListChatModel(responses=["{}"])).messages("Who wrote Brand?")
    assert '"sequences"' in messages[0].content and "<ENTITY_Q1>" in messages[0].content
    assert messages[1].content == "Question: Who wrote Brand?"


def test_parser_tolerates_prose_around_the_json() -> None:
    reply = 'Here is the decomposition:\n{"sequences": [["What country is Nugegoda in?"]]}\nHope it helps.'
    assert parse_decomposition(reply).sequences == (("What country is Nugegoda in?",),)


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ('{"sequences": [["Who directed Big Eyes?", "Who is the spouse of <ENTITY_Q1>?"]', "not JSON"),
        ("", "empty"),
        ('{"sequences": []}', "'sequences' is empty"),
        ('{"sequences": [[]]}', "sequence 1 is empty"),
        ('{"questions": [["Who wrote Brand?"]]}', "no 'sequences' key (keys: questions)"),
        ('"Who wrote Brand?"', "must be a JSON object"),
        ('{"sequences": "Who wrote Brand?"}', "'sequences' must be a list of lists, got a JSON string"),
        ('{"sequences": ["Who wrote Brand?", ["Where was <ENTITY_Q1> born?"]]}',
         "sequence 1 must be a list of question strings"),
        ('{"sequences": [["Who wrote Brand?", {"q": "x"}]]}', "sequence 1, step 2: expected a string"),
        ('{"sequences": [["Where was <ENTITY_Q3> born?", "Who wrote Brand?"]]}',
         "sequence 1, step 1: <ENTITY_Q3> refers to step 3, which does not exist"),
        ('{"sequences": [["Who wrote Brand?"], ["Where was <ENTITY_Q1> born?"]]}',
         "sequence 2, step 1: <ENTITY_Q1> refers to itself"),
        ('{"sequences": [["Who wrote Brand?", ""]]}', "sequence 1, step 2: empty sub-question"),
    ],
)  # fmt: skip
def test_malformed_llm_output_raises_with_reason(reply, reason) -> None:
    decomposer = LLMDecomposer(FakeListChatModel(responses=[reply or " "]))
    with pytest.raises(DecompositionError, match=re.escape(reason)):
        decomposer.decompose("Where was the author of Brand born?")


def test_llm_decomposer_rejects_empty_question() -> None:
    with pytest.raises(DecompositionError, match="empty question"):
        LLMDecomposer(FakeListChatModel(responses=[COMPARISON_REPLY])).decompose("  ")


# --------------------------------------------------------------------------- offline rules


@pytest.fixture(scope="module")
def offline() -> OfflineDecomposer:
    return OfflineDecomposer()


def _seqs(dec: Decomposition) -> list[list[str]]:
    return [list(s) for s in dec.sequences]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("When was the performer of Blue Horizon born?",
         ["Who is the performer of Blue Horizon?", "When was <ENTITY_Q1> born?"]),
        ("Who is the spouse of the director of Paper Moon?",
         ["Who is the director of Paper Moon?", "Who is the spouse of <ENTITY_Q1>?"]),
        ("When did the author of The Hobbit die?", ["Who is the author of The Hobbit?", "When did <ENTITY_Q1> die?"]),
        ("Who is the father of the composer of The Blue Danube?",
         ["Who is the composer of The Blue Danube?", "Who is the father of <ENTITY_Q1>?"]),
        ("What is the capital of the country where Lake Titicaca is located?",
         ["What country is Lake Titicaca located in?", "What is the capital of <ENTITY_Q1>?"]),
        ("Who founded the company that owns YouTube?", ["What company owns YouTube?", "Who founded <ENTITY_Q1>?"]),
        ("In which city was Fernando Pessoa's father born?",
         ["Who is the father of Fernando Pessoa?", "In which city was <ENTITY_Q1> born?"]),
        ("Where was the founder of the company that makes the iPhone born?",
         ["What company makes the iPhone?", "Who is the founder of <ENTITY_Q1>?", "Where was <ENTITY_Q2> born?"]),
        ("When did the country containing Lake Malawi become independent?",
         ["What country contains Lake Malawi?", "When did <ENTITY_Q1> become independent?"]),
        ("What is the population of the county in which Springfield, Vermont is located?",
         ["In what county is Springfield, Vermont located?", "What is the population of <ENTITY_Q1>?"]),
        ("What is the official language of Chad?", ["What is the official language of Chad?"]),
        ("Who is the director of Paper Moon?", ["Who is the director of Paper Moon?"]),
        # relative clauses the parser reads as complement clauses of the main verb
        ("Which lake is in the state in which Erik Holm lives?",
         ["In what state does Erik Holm live?", "Which lake is in <ENTITY_Q1>?"]),
        ("Which county is in the state in which Harlan County is?",
         ["In what state is Harlan County?", "Which county is in <ENTITY_Q1>?"]),
        ("Which league is in the country that Ostrava Comets FC is a club from?",
         ["What country is Ostrava Comets FC a club from?", "Which league is in <ENTITY_Q1>?"]),
        ("Who said that the band was good?", ["Who said that the band was good?"]),
    ],
)  # fmt: skip
def test_offline_chains(offline, question, expected) -> None:
    dec = offline.decompose(question)
    assert dec.source == "offline"
    assert _seqs(dec) == [expected]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Who was born first, Marie Curie or Lise Meitner?",
         [["When was Marie Curie born?"], ["When was Lise Meitner born?"]]),
        ("Which album came out first, Abbey Road or Let It Be?",
         [["When did Abbey Road come out?"], ["When did Let It Be come out?"]]),
        ("Which university was founded earlier, Leiden University or Uppsala University?",
         [["When was Leiden University founded?"], ["When was Uppsala University founded?"]]),
        ("Which film has the director who died first, Paper Moon or Nashville?",
         [["Who is the director of Paper Moon?", "When did <ENTITY_Q1> die?"],
          ["Who is the director of Nashville?", "When did <ENTITY_Q1> die?"]]),
        ("Are Kaiserslautern and Mainz located in the same country?",
         [["What country is Kaiserslautern located in?"], ["What country is Mainz located in?"]]),
        ("Are Tove Jansson and Astrid Lindgren of the same nationality?",
         [["What is the nationality of Tove Jansson?"], ["What is the nationality of Astrid Lindgren?"]]),
    ],
)  # fmt: skip
def test_offline_comparisons_become_parallel_sequences(offline, question, expected) -> None:
    assert _seqs(offline.decompose(question)) == expected


# HotpotQA-style shapes, written for these tests (bridge questions, and comparisons whose answer is
# one of the options or yes/no): what the offline rules make of each, and how the answers combine.
@pytest.mark.parametrize(
    ("question", "expected", "comparison"),
    [
        ("What nationality is the director of Big Eyes?",
         [["Who is the director of Big Eyes?", "What nationality is <ENTITY_Q1>?"]], None),
        ("The author of Brand was born in what year?",
         [["Who is the author of Brand?", "In what year was <ENTITY_Q1> born?"]], None),
        ("Henrik Ibsen was born in which town?", [["In which town was Henrik Ibsen born?"]], None),
        ('The director of the romantic comedy "Big Stone Gap" is based in what New York city?',
         [['Who is the director of the romantic comedy "Big Stone Gap"?', "In what New York city is <ENTITY_Q1> based?"]],
         None),
        ("The director of the romantic comedy Big Stone Gap is based in what New York city?",
         [["Who is the director of the romantic comedy Big Stone Gap?", "In what New York city is <ENTITY_Q1> based?"]],
         None),
        ("When was the director of the 2014 American film Big Eyes born?",
         [["Who is the director of the 2014 American film Big Eyes?", "When was <ENTITY_Q1> born?"]], None),
        ("Who is the father of the man who founded Apple?",  # a clause, never read as a qualified name
         [["Who founded Apple?", "Who is the father of <ENTITY_Q1>?"]], None),
        ("In which city is the university where Alan Turing studied located?",
         [["What university did Alan Turing study in?", "In which city is <ENTITY_Q1> located?"]], None),
        # the unknown sits in a clause on the object: the object is asked for first, the clause last
        ("The Oberoi family is part of a hotel company that has a head office in what city?",
         [["What hotel company is the Oberoi family part of?", "<ENTITY_Q1> has a head office in what city?"]],
         None),
        ("Brown State Fishing Lake is in a country that has a population of how many inhabitants?",
         [["What country is Brown State Fishing Lake in?",
           "<ENTITY_Q1> has a population of how many inhabitants?"]], None),
        ("Steve Jobs founded a company that is headquartered in which city?",
         [["What company did Steve Jobs found?", "In which city is <ENTITY_Q1> headquartered?"]], None),
        ("Which film was released first, Big Eyes or Ed Wood?",
         [["When was Big Eyes released?"], ["When was Ed Wood released?"]],
         Comparison("earliest", ("Big Eyes", "Ed Wood"))),
        ("Between Big Eyes and Ed Wood, which film was released later?",
         [["When was Big Eyes released?"], ["When was Ed Wood released?"]],
         Comparison("latest", ("Big Eyes", "Ed Wood"))),
        ("Who was born earlier, Tim Burton or Wes Anderson?",
         [["When was Tim Burton born?"], ["When was Wes Anderson born?"]],
         Comparison("earliest", ("Tim Burton", "Wes Anderson"))),
        ("Who was born first, the director of Big Eyes or the director of Rushmore?",
         [["Who is the director of Big Eyes?", "When was <ENTITY_Q1> born?"],
          ["Who is the director of Rushmore?", "When was <ENTITY_Q1> born?"]],
         Comparison("earliest", ("the director of Big Eyes", "the director of Rushmore"))),
        ("Which river is longer, the Vistula or the Oder?",
         [["How long is the Vistula?"], ["How long is the Oder?"]],
         Comparison("largest", ("the Vistula", "the Oder"))),
        ("Are Big Eyes and Ed Wood both directed by Tim Burton?",
         [["Who directed Big Eyes?"], ["Who directed Ed Wood?"]],
         Comparison("both", ("Big Eyes", "Ed Wood"), "Tim Burton")),
        ("Are Brand and Peer Gynt both plays by Henrik Ibsen?",
         [["Who is the author of Brand?"], ["Who is the author of Peer Gynt?"]],
         Comparison("both", ("Brand", "Peer Gynt"), "Henrik Ibsen")),
        ("Are both Big Eyes and Ed Wood directed by Tim Burton?",
         [["Who directed Big Eyes?"], ["Who directed Ed Wood?"]],
         Comparison("both", ("Big Eyes", "Ed Wood"), "Tim Burton")),
        ("Are both Cadillac and Lincoln American car brands?",
         [["What nationality is Cadillac?"], ["What nationality is Lincoln?"]],
         Comparison("both", ("Cadillac", "Lincoln"), "American")),
        ("Are Tim Burton and Wes Anderson both American?",
         [["What nationality is Tim Burton?"], ["What nationality is Wes Anderson?"]],
         Comparison("both", ("Tim Burton", "Wes Anderson"), "American")),
        ("Do Big Eyes and Rushmore have the same director?",
         [["Who is the director of Big Eyes?"], ["Who is the director of Rushmore?"]],
         Comparison("same", ("Big Eyes", "Rushmore"))),
        ("Were Marie Curie and Lise Meitner known for the same type of work?",
         [["What is Marie Curie known for?"], ["What is Lise Meitner known for?"]],
         Comparison("same", ("Marie Curie", "Lise Meitner"))),
    ],
)  # fmt: skip
def test_offline_bridge_and_comparison_shapes(offline, question, expected, comparison) -> None:
    dec = offline.decompose(question)
    assert _seqs(dec) == expected
    assert dec.comparison == comparison


def test_offline_never_fails_and_keeps_the_question_when_no_rule_applies(offline) -> None:
    question = "How does photosynthesis store energy?"
    assert _seqs(offline.decompose(question)) == [[question]]
    with pytest.raises(DecompositionError, match="empty question"):
        offline.decompose(" ")


def _names(question: str) -> set[str]:
    """Capitalised words and numbers after the first word, without a possessive 's."""
    words = re.findall(r"[^\W_][\w.'-]*", question)[1:]
    return {re.sub(r"'s$", "", w) for w in words if w[0].isupper() or w[0].isdigit()}


def test_offline_chains_on_every_musique_question_keep_names_and_link_their_steps(
    offline, musique_questions: list[dict]
) -> None:
    """Whatever the rules make of a real question, the result stays usable for chain search:
    each step is a question, no name of the question is lost, and the last step of a
    multi-step chain builds on an earlier answer instead of restating the question."""
    for item in musique_questions:
        question = item["question"]
        dec = offline.decompose(question)
        steps = [step for seq in dec.sequences for step in seq]
        assert dec.source == "offline" and dec.hops <= MAX_HOPS
        for step in steps:
            assert step[:1].isupper() and step.endswith("?"), (question, step)
        missing = {name for name in _names(question) if name not in " ".join(steps)}
        assert not missing, (question, missing, steps)
        for i, seq in enumerate(dec.sequences):
            if len(seq) > 1:
                assert dec.placeholders(i, len(seq) - 1), (question, seq)
                assert question not in seq

"""The rerankers' signals, on hand-made candidates (no stores needed): relation, type, direction."""

from __future__ import annotations

from types import SimpleNamespace

from engramdb.retrieval.answer_types import asked_noun, expected_type
from engramdb.retrieval.hop_direction import relabel
from engramdb.retrieval.rerankers import OfflineReranker, VoyageReranker
from engramdb.retrieval.results import QACandidate


def qa(
    qa_id: str, question: str, answer: str, answer_type: str = "THING", dense: float = 0.6,
    asks: str = "id-x", vp: str = "",
) -> QACandidate:  # fmt: skip
    return QACandidate(
        qa_id=qa_id, question=question, answer_ids=(f"id-{answer}",), answer_names=(answer,),
        answer_types=(answer_type,), question_entity_ids=(asks,), doc_id="d", chunk_id="d#0", dense_score=dense,
        verb_phrase_id=vp,
    )  # fmt: skip


def test_relation_words_decide_between_questions_about_the_same_entity() -> None:
    candidates = [
        qa("a", "When was Journal of Psychotherapy Integration established?", "1991", "DATE", dense=0.72),
        qa("b", "Who published Journal of Psychotherapy Integration?", "American Psychological Association", "ORG", 0.70),
    ]  # fmt: skip
    ranked = OfflineReranker().score(
        "What company published Journal of Psychotherapy Integration?", candidates
    )
    assert ranked[0].qa.qa_id == "b"


def test_answer_type_must_fit_the_wh_word() -> None:
    candidates = [
        qa("place", "Where was Hank Snow born?", "Brooklyn", "PLACE", dense=0.7),
        qa("date", "When was Hank Snow born?", "May 9, 1914", "DATE", dense=0.7),
    ]
    when = OfflineReranker().score("When was Hank Snow born?", candidates)
    where = OfflineReranker().score("Where was Hank Snow born?", candidates)
    assert when[0].qa.qa_id == "date" and where[0].qa.qa_id == "place"
    assert expected_type("How many stores are in Tennessee?").kind == "number"
    assert expected_type("Name the river.") is None


def test_an_answer_whose_name_carries_the_asked_noun_ranks_first() -> None:
    candidates = [
        qa("city", "What place is in Russia?", "Moscow", "PLACE", dense=0.7),
        qa("krai", "What place is in Russia?", "Khabarovsk Krai", "PLACE", dense=0.7),
    ]
    ranked = OfflineReranker().score("Which krai is in Russia?", candidates, ["Russia"])
    assert ranked[0].qa.qa_id == "krai" and ranked[0].score > ranked[1].score
    # no asked noun, no preference: equal evidence scores equally
    plain = OfflineReranker().score("What is in Russia?", candidates, ["Russia"])
    assert plain[0].score == plain[1].score
    assert asked_noun("Which krai is in Russia?") == "krai"
    assert asked_noun("What Norwegian city hosted it?") == "city"
    assert asked_noun("What is the capital of Norway?") == "capital"
    assert asked_noun("Who founded it?") is None and asked_noun("What did she write?") is None


def test_a_hop_never_answers_with_its_input_entity() -> None:
    candidates = [
        qa("self", "Who is Hank Snow?", "Hank Snow"),
        qa("other", "Where was Hank Snow born?", "Brooklyn"),
    ]
    ranked = OfflineReranker().score("Where was Hank Snow born?", candidates, input_names=["Hank Snow"])
    assert [r.qa.qa_id for r in ranked] == ["other"]


def test_scores_stay_in_unit_range_and_are_deterministic() -> None:
    candidates = [
        qa(str(i), f"What is thing {i}?", f"answer {i}", dense=d) for i, d in enumerate([1.0, 0.0, -0.3])
    ]
    first = OfflineReranker().score("What is thing 1?", candidates)
    assert all(0.0 <= r.score <= 1.0 for r in first)
    assert first == OfflineReranker().score("What is thing 1?", candidates)


def test_voyage_reranker_sends_qa_texts_and_maps_scores_back() -> None:
    class FakeVoyageClient:  # the network boundary: records the request, replies like the API
        def rerank(self, query: str, documents: list[str], model: str):
            self.request = (query, documents, model)
            return SimpleNamespace(results=[SimpleNamespace(index=1, relevance_score=0.9),
                                            SimpleNamespace(index=0, relevance_score=0.2)])  # fmt: skip

    client = FakeVoyageClient()
    candidates = [qa("a", "When was X founded?", "1991"), qa("b", "Who founded X?", "Ann")]
    ranked = VoyageReranker("key", client=client).score("Who founded X?", candidates)
    assert [(r.qa.qa_id, r.score) for r in ranked] == [("b", 0.9), ("a", 0.2)]
    assert client.request == ("Who founded X?", ["Q: When was X founded? A: 1991", "Q: Who founded X? A: Ann"],
                              "rerank-2.5")  # fmt: skip


def _capital_pairs() -> list[QACandidate]:
    """The two stored readings of "Warsaw is the capital of Poland", as a hop about Warsaw retrieves them."""
    forward_words = qa(
        "of", "What is Warsaw the capital of?", "Poland", "PLACE", 0.9, asks="id-Warsaw", vp="v1"
    )
    twin = qa("cap", "What is the capital of Poland?", "Warsaw", "PLACE", 0.95, asks="id-Poland", vp="v1")
    born = qa("born", "Who was born in Warsaw?", "Marie Curie", "PERSON", 0.5, asks="id-Warsaw", vp="v2")
    lies = qa(
        "lies", "What river does Warsaw lie on?", "Vistula River", "PLACE", 0.6, asks="id-Warsaw", vp="v3"
    )
    return relabel([forward_words, twin, born, lies], ["id-Warsaw"])


def test_a_fact_read_the_other_way_round_is_a_reverse_match() -> None:
    """ "What is the capital of Warsaw?" is worded like the twin in which Warsaw is the answer, so the
    pair asking about Warsaw ("What is Warsaw the capital of? -> Poland") reads in reverse."""
    ranked = OfflineReranker().score("What is the capital of Warsaw?", _capital_pairs(), ["Warsaw"])
    by_id = {r.qa.qa_id: r for r in ranked}
    assert "cap" not in by_id  # its only answer is the hop's own input
    assert by_id["of"].direction == "reverse-reading"
    assert by_id["lies"].direction == "forward" and by_id["born"].direction == "forward"
    assert by_id["of"].score < by_id["lies"].score  # a reverse match never outranks a forward one of its kind
    # the same pair read forward: "What is Warsaw the capital of?" keeps it forward
    forward = OfflineReranker().score("What is Warsaw the capital of?", _capital_pairs(), ["Warsaw"])
    assert forward[0].qa.qa_id == "of" and forward[0].direction == "forward"


def test_a_pair_answering_with_the_subject_is_reverse_and_a_symmetric_relation_stays_forward() -> None:
    married = qa("m1", "Who did Pierre Curie marry?", "Marie Curie", "PERSON", 0.8, asks="id-Pierre", vp="v9")
    twin = qa("m2", "Who did Marie Curie marry?", "Pierre Curie", "PERSON", 0.8, asks="id-Marie", vp="v9")
    sibling = QACandidate(
        qa_id="kids", question="Who were the children of Pierre Curie?", answer_ids=("id-Marie", "id-Irene"),
        answer_names=("Marie Curie", "Irène Joliot-Curie"), answer_types=("PERSON", "PERSON"),
        question_entity_ids=("id-Pierre",), doc_id="d", chunk_id="d#0", dense_score=0.7,
    )  # fmt: skip
    candidates = relabel([married, twin, sibling], ["id-Marie"])
    ranked = {
        r.qa.qa_id: r
        for r in OfflineReranker().score("Who did Marie Curie marry?", candidates, ["Marie Curie"])
    }
    assert ranked["m2"].direction == "forward"  # the twin reads alike: a symmetric relation is not reversed
    assert ranked["kids"].direction == "reverse" and ranked["kids"].score < ranked["m2"].score


def test_voyage_scores_are_direction_aware_too() -> None:
    class FakeVoyageClient:  # the cross-encoder likes both readings equally
        def rerank(self, query: str, documents: list[str], model: str):
            return SimpleNamespace(results=[SimpleNamespace(index=i, relevance_score=0.9)
                                            for i in range(len(documents))])  # fmt: skip

    ranked = VoyageReranker("key", client=FakeVoyageClient()).score(
        "What is the capital of Warsaw?", _capital_pairs(), ["Warsaw"]
    )
    by_id = {r.qa.qa_id: r for r in ranked}
    assert by_id["of"].direction == "reverse-reading" and by_id["of"].score < 0.9
    assert by_id["lies"].score == 0.9

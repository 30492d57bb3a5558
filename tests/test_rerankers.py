"""The offline reranker's signals, on hand-made candidates (no stores needed)."""

from __future__ import annotations

from types import SimpleNamespace

from engramdb.retrieval.rerankers import OfflineReranker, VoyageReranker, expected_types
from engramdb.retrieval.results import QACandidate


def qa(qa_id: str, question: str, answer: str, answer_type: str = "THING", dense: float = 0.6) -> QACandidate:
    return QACandidate(
        qa_id=qa_id, question=question, answer_ids=(f"id-{answer}",), answer_names=(answer,),
        answer_types=(answer_type,), question_entity_ids=("id-x",), doc_id="d", chunk_id="d#0", dense_score=dense,
    )  # fmt: skip


def test_relation_words_decide_between_questions_about_the_same_entity() -> None:
    candidates = [
        qa("a", "When was Journal of Psychotherapy Integration established?", "1991", "DATE", dense=0.72),
        qa("b", "Who published Journal of Psychotherapy Integration?", "American Psychological Association", "ORG", 0.70),
    ]  # fmt: skip
    ranked = OfflineReranker().score("What company published Journal of Psychotherapy Integration?", candidates)
    assert ranked[0].qa.qa_id == "b"


def test_answer_type_must_fit_the_wh_word() -> None:
    candidates = [
        qa("place", "Where was Hank Snow born?", "Brooklyn", "PLACE", dense=0.7),
        qa("date", "When was Hank Snow born?", "May 9, 1914", "DATE", dense=0.7),
    ]
    when = OfflineReranker().score("When was Hank Snow born?", candidates)
    where = OfflineReranker().score("Where was Hank Snow born?", candidates)
    assert when[0].qa.qa_id == "date" and where[0].qa.qa_id == "place"
    assert expected_types("How many stores are in Tennessee?") == frozenset({"NUMBER"})
    assert expected_types("Name the river.") is None


def test_a_hop_never_answers_with_its_input_entity() -> None:
    candidates = [qa("self", "Who is Hank Snow?", "Hank Snow"), qa("other", "Where was Hank Snow born?", "Brooklyn")]
    ranked = OfflineReranker().score("Where was Hank Snow born?", candidates, input_names=["Hank Snow"])
    assert [r.qa.qa_id for r in ranked] == ["other"]


def test_scores_stay_in_unit_range_and_are_deterministic() -> None:
    candidates = [qa(str(i), f"What is thing {i}?", f"answer {i}", dense=d) for i, d in enumerate([1.0, 0.0, -0.3])]
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

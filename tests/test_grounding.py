"""Which sentence of a passage grounds a QA pair (pure function; the chain tests cover the graph read)."""

from __future__ import annotations

from engramdb.ingestion.documents import split_sentences, split_text
from engramdb.retrieval.grounding import MAX_SENTENCE_WORDS, source_sentence, split_grounded
from engramdb.retrieval.results import Evidence

PASSAGE = (
    "Little Boy was the code name for the type of atomic bomb dropped on Hiroshima. "
    "The Enola Gay dropped the bomb on 6 August 1945. "
    "It was the first nuclear weapon used in warfare."
)


def test_the_sentence_naming_the_answer_wins_over_one_sharing_more_words() -> None:
    # The pair's wording shares more words with the first sentence, but only the second names its answer.
    sentence = source_sentence("What dropped the type of atomic bomb on Hiroshima?", ["Enola Gay"], PASSAGE)
    assert sentence == "The Enola Gay dropped the bomb on 6 August 1945."


def test_without_the_answer_in_any_sentence_the_question_words_decide() -> None:
    sentence = source_sentence("What was used first in warfare?", ["one"], PASSAGE)
    assert sentence == "It was the first nuclear weapon used in warfare."


def test_answers_match_whole_words_ignoring_case_and_punctuation() -> None:
    text = "Gayle was a pilot. The ENOLA GAY, a B-29, flew from Tinian."
    assert source_sentence("Which aircraft flew from Tinian?", ["Enola Gay"], text).startswith(
        "The ENOLA GAY"
    )
    assert source_sentence("Who was a pilot?", ["Gay"], text) == "The ENOLA GAY, a B-29, flew from Tinian."


def test_ties_go_to_the_earlier_sentence_and_empty_text_gives_nothing() -> None:
    assert source_sentence("Who?", [], "First one. Second one.") == "First one."
    assert source_sentence("Who?", ["x"], "   ") == ""


def test_a_run_on_sentence_is_clipped() -> None:
    long = " ".join(f"word{i}" for i in range(200))
    clipped = source_sentence("What?", ["word3"], long)
    assert clipped.endswith(" …") and len(clipped.split()) == MAX_SENTENCE_WORDS + 1


def test_a_grounded_pair_splits_back_into_pair_and_sentence() -> None:
    def item(kind: str, text: str) -> Evidence:
        return Evidence(kind=kind, id="x", text=text, score=1.0, doc_id="d", chunk_ids=("d#0",))

    grounded = item("qa_pair", 'Q: Who flew? A: Tibbets (source: "Tibbets flew the plane.")')
    assert split_grounded(grounded) == ("Q: Who flew? A: Tibbets", "Tibbets flew the plane.")
    assert split_grounded(item("qa_pair", "Q: Who flew? A: Tibbets")) == ("Q: Who flew? A: Tibbets", "")
    passage = item("passage", 'A film (source: "a novel")')  # only QA pairs are grounded this way
    assert split_grounded(passage) == ('A film (source: "a novel")', "")


def test_a_sentence_does_not_end_inside_a_name() -> None:
    text = (
        "Navy Nurse is a 1945 short film directed by D. Ross Lederman. Dr. Watson met him. It ran 20 minutes."
    )
    assert split_sentences(text) == [
        "Navy Nurse is a 1945 short film directed by D. Ross Lederman.",
        "Dr. Watson met him.",
        "It ran 20 minutes.",
    ]
    sentence = source_sentence("Who directed Navy Nurse?", ["D. Ross Lederman"], text)
    assert sentence == "Navy Nurse is a 1945 short film directed by D. Ross Lederman."
    # a long text is chunked on the same borders: no chunk ends on an initial
    long = " ".join([text] * 40)
    assert all(not piece.endswith(" D.") for piece in split_text(long, max_chars=300))

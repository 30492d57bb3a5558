"""Ground each QA pair of the evidence in the sentence it was drawn from.

A QA pair is a paraphrase written at ingest; when the extractor phrased it
poorly ("What dropped a bomb on Hiroshima? A: one") the pair alone misleads a
reader, while the sentence it came from still says what happened. So chain
search's evidence carries, after each pair, the one sentence of its source
chunk that best matches the pair: the sentence that names the pair's answer
and shares most content words with its question. The sentence is chosen at
question time from the stored chunk text, so memories ingested before this
existed are grounded too, and nothing about it is fitted to a question set:
it is provenance a user can check against the document.

A sentence already shown for a better-scored pair is not repeated (the pair
still records it in ``metadata["source_sentence"]``), which keeps the
evidence a reader is given small.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from engramdb.ingestion.documents import split_sentences
from engramdb.platform.graph import Graph
from engramdb.retrieval.metrics import normalize_answer
from engramdb.retrieval.rerankers import content_words
from engramdb.retrieval.results import Evidence, QACandidate

#: How a grounded pair's text reads: ``Q: ... A: ... (source: "<sentence>")``.
SOURCE_OPEN, SOURCE_CLOSE = ' (source: "', '")'
#: A source sentence longer than this is clipped (a run-on sentence or an unsplittable passage).
MAX_SENTENCE_WORDS = 60


def source_sentence(question: str, answers: Sequence[str], text: str) -> str:
    """The sentence of ``text`` that best supports the pair (question, answers); '' for no text.

    Naming one of the answers counts most (that is the fact the pair states),
    then the content words shared with the question; ties go to the earlier
    sentence, where a passage says what it is about.
    """
    sentences = split_sentences(text)
    if not sentences:
        return ""
    asked = content_words(question)
    names = [f" {n} " for n in (normalize_answer(a) for a in answers) if n]

    def support(sentence: str) -> tuple[int, int]:
        padded = f" {normalize_answer(sentence)} "
        return (int(any(n in padded for n in names)), len(asked & content_words(sentence)))

    best = max(sentences, key=support)  # max keeps the first of equals
    words = best.split()
    return best if len(words) <= MAX_SENTENCE_WORDS else " ".join(words[:MAX_SENTENCE_WORDS]) + " …"


def ground_qa_evidence(graph: Graph, evidence: Sequence[Evidence]) -> list[Evidence]:
    """The evidence with each QA pair followed by its source sentence (one read for all chunks).

    Other kinds of evidence pass unchanged; a pair whose chunk is gone (deleted
    since it was retrieved) keeps its plain text.
    """
    chunk_ids = sorted({e.chunk_id for e in evidence if e.kind == "qa_pair" and e.chunk_id})
    if not chunk_ids:
        return list(evidence)
    texts = {r["chunk_id"]: r["text"] or "" for r in graph.read("traversals/chunks_by_id", ids=chunk_ids)}
    shown: set[str] = set()
    out = []
    for e in evidence:
        text = texts.get(e.chunk_id) if e.kind == "qa_pair" else None
        sentence = source_sentence(e.question, e.answers, text) if text else ""
        if not sentence:
            out.append(e)
            continue
        grounded = e.text if sentence in shown else f"{e.text}{SOURCE_OPEN}{sentence}{SOURCE_CLOSE}"
        shown.add(sentence)
        out.append(replace(e, text=grounded, metadata={**e.metadata, "source_sentence": sentence}))
    return out


def split_grounded(evidence: Evidence) -> tuple[str, str]:
    """A grounded QA pair's text as (pair, source sentence); other evidence as (text, '')."""
    pair, opened, rest = evidence.text.partition(SOURCE_OPEN)
    if evidence.kind != "qa_pair" or not opened or not rest.endswith(SOURCE_CLOSE):
        return evidence.text, ""
    return pair, rest.removesuffix(SOURCE_CLOSE)


def sentence_evidence(sentence: str, qa: QACandidate, score: float) -> Evidence:
    """A QA pair's source sentence as evidence of its own (kind ``sentence``), to follow the pair
    when evidence is packed into a budget (it can then be kept or dropped on its own)."""
    return Evidence(
        kind="sentence", id=f"{qa.qa_id}#sentence", text=sentence, score=score, doc_id=qa.doc_id,
        chunk_ids=(qa.chunk_id,), metadata={"qa_id": qa.qa_id},
    )  # fmt: skip

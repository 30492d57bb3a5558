"""Quality and speed of the offline GSW extractor on real benchmark data.

Usage (from the repository root)::

    python benchmarks/bench_extractor.py [--sample 500] [--n-process 1] [--show-misses 0]

Quality, on the supporting paragraphs of the 50 MuSiQue questions in
``shared/data/musique/questions.json`` (each gold sub-question is a hop
whose answer lies in one paragraph):

* ``answer recall``: share of hops whose gold answer (normalised) equals or is
  contained in the name of some QA pair's *answer* entity in that paragraph's
  GSW -- the answer exists as an atomic entity a chain can continue from;
* ``answer@5 (lexical)``: share of hops whose gold answer is among the answers
  of the 5 QA pairs whose questions best overlap the gold sub-question (earlier
  hops' gold answers substituted for ``#1``...) -- a crude check that the
  relation words in the questions match how users ask;
* QA pairs per paragraph, the share of QA pairs whose answers are all at most
  5 tokens, and the share of questions containing a pronoun.

Speed: ``extract_many`` over a sample of the 2WikiMultihopQA corpus.

Silver standard (``--silver DIR``, no Neo4j needed)::

    python benchmarks/bench_extractor.py --silver ../shared/data/llm-recordings/gsw-extract-v2 [--json OUT]

``DIR`` holds a real model's recorded replies to the extraction prompt, one
``{messages, reply}`` file per passage. Each reply is read into the model's GSW
with the LLM extractor's own parser; the offline extractor runs on the same
passage text and title (one ``extract_many`` call after a warm-up, which also
gives the throughput in passages/s). Against the model's GSW as silver standard,
per half of a fixed split (``sha256(title) % 2``: 0 "design", 1 "held-out") and
overall (micro-averaged):

* ``entity_recall``: share of the model's entities whose normalised name or an
  alias equals an offline entity's name or alias;
* ``pair_recall``: share of the model's unordered {question entity, answer
  entity} pairs that some offline QA pair also links (either direction, names
  or aliases); ``pair_precision``: share of the offline pairs the model links;
* ``type_agreement``: among matched entities, share with the same coarse type
  (``ENTITY_TYPES``; the offline extractor's extra types such as NORP -> THING);
* ``atomic_offline`` / ``atomic_model``: share of QA pairs whose answer entity
  names are all at most 5 tokens.

It also counts the model entities and pairs the offline extractor misses, every
one of them, put into rough classes by regexes on their source sentence -- a
rough classification, not a diagnosis -- and, when
``shared/data/musique/questions.json`` is there, the hop coverage: the share of
gold sub-answers that are an answer entity of their supporting paragraph's QA
pairs (exact name/alias match, and contained as whole words). Throughput is
given per wall second and per second of the process's CPU time (the fairer
figure on a shared machine). A stored run, ``bench_extractor_before.json``
(the extractor before issue 26's rules, v1.1; ``--before`` names another or
``none``), is printed beside every figure and class count. The code is in
``silver_support.py``.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import string
import sys
import time
from pathlib import Path

from bench_support import SHARED

from engramdb.ingestion.extraction.offline import ChunkText, OfflineExtractor
from engramdb.ingestion.gsw import GSW

DATA = SHARED / "data"
# The silver figures of the offline extractor before issue 26's rules (v1.1), printed beside a new run.
BEFORE = Path(__file__).with_name("bench_extractor_before.json")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PRONOUNS = re.compile(r"\b(he|she|it|they|him|her|his|its|their|them)\b", re.IGNORECASE)
_STOP = set(
    "a an the of in on at to for by with from and or is was were are be been did does do what who whom "
    "which where when how many much whose that this as it its his her their".split()
)


def normalise(text: str) -> str:
    text = text.lower()
    text = "".join(ch for ch in text if ch not in string.punctuation)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def _contains(gold: str, name: str) -> bool:
    return bool(gold) and (gold == name or f" {gold} " in f" {name} ")


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _bag(text: str) -> set[str]:
    return {_stem(w) for w in normalise(text).split() if w not in _STOP}


def sub_question(text: str, previous: list[str]) -> str:
    """A gold sub-question as a user would ask it: ``#k`` filled in, KB style turned into a question."""
    for k, ans in enumerate(previous, start=1):
        text = text.replace(f"#{k}", ans)
    if ">>" in text:
        subject, relation = (part.strip() for part in text.split(">>", 1))
        text = f"What is the {relation} of {subject}?"
    return text


def evaluate(extractor: OfflineExtractor, items: list[dict], show_misses: int = 0) -> dict[str, float]:
    """Answer recall, lexical answer@5, QA/paragraph and atomic share on the items' supporting paragraphs."""
    paragraphs: dict[tuple[str, str], ChunkText] = {}
    for item in items:
        for hop in item["question_decomposition"]:
            p = item["paragraphs"][hop["paragraph_support_idx"]]
            paragraphs.setdefault(
                (p["title"], p["paragraph_text"]), ChunkText(p["paragraph_text"], p["title"])
            )
    keys = list(paragraphs)
    gsws = dict(zip(keys, extractor.extract_many([paragraphs[k] for k in keys]), strict=True))
    hops = hits = lex_hits = 0
    misses: list[str] = []
    for item in items:
        previous: list[str] = []
        for hop in item["question_decomposition"]:
            p = item["paragraphs"][hop["paragraph_support_idx"]]
            gsw = gsws[(p["title"], p["paragraph_text"])]
            gold = normalise(hop["answer"])
            question = sub_question(hop["question"], previous)
            previous.append(hop["answer"])
            hops += 1
            names = {e.id: normalise(e.name) for e in gsw.entities}
            answer_names = {names[a] for qa in gsw.qa_pairs for a in qa.answer_entity_ids}
            if any(_contains(gold, n) for n in answer_names):
                hits += 1
            elif len(misses) < show_misses:
                misses.append(
                    f"- {question} => {hop['answer']!r} | {p['title']}: {p['paragraph_text'][:160]}"
                )
            qbag = _bag(question)
            ranked = sorted(
                gsw.qa_pairs,
                key=lambda qa: -len(qbag & _bag(qa.question)) / math.sqrt(1 + len(_bag(qa.question))),
            )[:5]
            if any(_contains(gold, names[a]) for qa in ranked for a in qa.answer_entity_ids):
                lex_hits += 1
    all_gsws = list(gsws.values())
    n_qa = sum(len(g.qa_pairs) for g in all_gsws)
    atomic = sum(
        1 for g in all_gsws for qa in g.qa_pairs if all(_tokens(g, a) <= 5 for a in qa.answer_entity_ids)
    )
    pronoun = sum(1 for g in all_gsws for qa in g.qa_pairs if _PRONOUNS.search(qa.question))
    if misses:
        print("Missed hops:", *misses, sep="\n")
    return {
        "hops": hops,
        "paragraphs": len(all_gsws),
        "answer_recall": hits / hops,
        "answer_at5_lexical": lex_hits / hops,
        "qa_per_paragraph": n_qa / max(1, len(all_gsws)),
        "atomic_share": atomic / max(1, n_qa),
        "pronoun_question_share": pronoun / max(1, n_qa),
        "entities_per_paragraph": sum(len(g.entities) for g in all_gsws) / max(1, len(all_gsws)),
    }


def _tokens(gsw: GSW, entity_id: str) -> int:
    return len(gsw.entity(entity_id).name.split())


def throughput(extractor: OfflineExtractor, sample: int) -> float:
    corpus = json.loads((DATA / "2wiki" / "corpus.json").read_text())
    step = max(1, len(corpus) // sample)
    chunks = [ChunkText(p["text"], p["title"]) for p in corpus[::step][:sample]]
    extractor.extract_many(chunks[:20])  # warm up
    start = time.perf_counter()
    extractor.extract_many(chunks)
    return len(chunks) / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sample", type=int, default=500, help="2Wiki passages for the speed run (0: skip)")
    parser.add_argument("--n-process", type=int, default=1)
    parser.add_argument("--show-misses", type=int, default=0)
    parser.add_argument(
        "--silver", type=Path, help="folder of recorded LLM replies: the silver-standard mode"
    )
    parser.add_argument("--json", type=Path, help="with --silver: write the figures to this JSON file")
    parser.add_argument(
        "--before",
        type=Path,
        default=BEFORE,
        help="with --silver: a stored run (--json) printed beside this one ('none': no comparison)",
    )
    args = parser.parse_args(argv)
    extractor = OfflineExtractor(n_process=args.n_process)
    if args.silver:
        from silver_support import print_silver, run_silver

        musique = DATA / "musique" / "questions.json"
        silver = run_silver(extractor, args.silver, normalise, musique if musique.exists() else None)
        before = json.loads(args.before.read_text()) if args.before and args.before.exists() else None
        print_silver(silver, before)
        if args.json:
            args.json.write_text(json.dumps(silver, indent=2) + "\n")
        return 0
    items = json.loads((DATA / "musique" / "questions.json").read_text())
    result = evaluate(extractor, items, args.show_misses)
    print(f"extractor {extractor.name} v{extractor.version}")
    for k, v in result.items():
        print(f"{k:>24}: {v:.3f}" if isinstance(v, float) else f"{k:>24}: {v}")
    if args.sample:
        print(
            f"{'paragraphs_per_second':>24}: {throughput(extractor, args.sample):.1f} (n_process={args.n_process})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Build a held-out-style question set from 2Wiki passages (never from the MuSiQue dev questions).

    python benchmarks/make_heldout_2wiki.py [--out benchmarks/results/heldout-2wiki] [--distractors 300]
    engramdb -n heldout-2wiki eval benchmarks/results/heldout-2wiki/questions.json \\
        --corpus benchmarks/results/heldout-2wiki/corpus.json --decomposition offline -s chain -s dense -s bm25

HotpotQA-style shapes over film passages ("X is a 1955 Danish drama film directed
by Y") and the passages of their directors ("Y (15 November 1911 – 17 May 2003)
was a Norwegian actress"), with gold answers read off the passages by pattern:

* bridge: "What nationality is the director of X?", "When was the director of X born?";
* comparison: "Which film came out first, X or Z?", "Who was born first, Y or W?",
  "Are Y and W both <nationality>?";
* unanswerable: the same bridge shapes about film titles no passage holds
  (``answerable: false``), for refusal accuracy.

The corpus is every passage a question uses plus seeded random distractors.
Deterministic for a given seed; the shapes are fixed here, not fitted to any result.
"""

from __future__ import annotations

import random

from heldout_support import Support, arguments, film_pool, leave_out, load_corpus, write_set, year_of

from engramdb.ingestion.extraction.rules_lexicon import country_of_demonym

INVENTED_FILMS = ["The Quiet Orchard of Velmora", "Tessarine Nights", "A Winter in Oldcastle Bay",
                  "The Ninth Lantern of Uskor", "Marrowdeep", "The Glass Ferryman"]  # fmt: skip


def main() -> None:
    args = arguments(__doc__, "heldout-2wiki", seed=13)
    rng = random.Random(args.seed)
    corpus = load_corpus()
    films, directors = film_pool(corpus)
    rng.shuffle(films)
    support = Support()
    items: list[dict] = []
    for f in films[:12]:
        d = directors[f["director"]]
        items.append({"id": f"nat-{len(items)}", "question": f"What nationality is the director of {f['name']}?",
                      "answer": d["nat"], "answer_aliases": [country_of_demonym(d["nat"]) or ""],
                      "paragraphs": support(f["passage"], d["passage"])})  # fmt: skip
    for f in films[12:22]:
        d = directors[f["director"]]
        items.append({"id": f"born-{len(items)}", "question": f"When was the director of {f['name']} born?",
                      "answer": d["born"], "answer_aliases": [str(year_of(d["born"]))],
                      "paragraphs": support(f["passage"], d["passage"])})  # fmt: skip
    pairs = [(a, b) for a, b in zip(films[22:42:2], films[23:43:2], strict=False) if a["year"] != b["year"]]
    for a, b in pairs[:8]:
        first = a if a["year"] < b["year"] else b
        items.append({"id": f"first-{len(items)}", "question": f"Which film came out first, {a['name']} or {b['name']}?",
                      "answer": first["name"], "paragraphs": support(a["passage"], b["passage"])})  # fmt: skip
    people = sorted(directors.values(), key=lambda d: d["name"])
    rng.shuffle(people)
    born_pairs = [(a, b) for a, b in zip(people[0:16:2], people[1:17:2], strict=False)
                  if year_of(a["born"]) != year_of(b["born"])]  # fmt: skip
    for a, b in born_pairs[:6]:
        first = a if year_of(a["born"]) < year_of(b["born"]) else b
        items.append({"id": f"older-{len(items)}", "question": f"Who was born first, {a['name']} or {b['name']}?",
                      "answer": first["name"], "paragraphs": support(a["passage"], b["passage"])})  # fmt: skip
    for a, b in zip(people[16:24:2], people[17:25:2], strict=False):
        same = a["nat"] == b["nat"]
        items.append({"id": f"both-{len(items)}", "question": f"Are {a['name']} and {b['name']} both {a['nat']}?",
                      "answer": "yes" if same else "no", "paragraphs": support(a["passage"], b["passage"])})  # fmt: skip
    for name in INVENTED_FILMS:
        shape = rng.choice(["What nationality is the director of {}?", "When was the director of {} born?"])
        items.append({"id": f"absent-{len(items)}", "question": shape.format(name), "answerable": False})
    write_set(args.out, leave_out(items, args.exclude), support, corpus, args.distractors, rng)


if __name__ == "__main__":
    main()

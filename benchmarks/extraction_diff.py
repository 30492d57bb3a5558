"""What an extractor change does to a corpus's QA pairs, passage by passage.

    python benchmarks/extraction_diff.py dump CORPUS OUT.jsonl     # every QA pair of the offline extractor
    python benchmarks/extraction_diff.py diff BEFORE.jsonl AFTER.jsonl [--show 10] [--seed 0]

``dump`` runs the offline extractor over a corpus file (a JSON list of ``{title, text}``, as
``../shared/data/2wiki/corpus.json``) and writes one line per QA pair: ``[title, question, sorted
answer names]``. Dump with one checkout, then with another (``PYTHONPATH=<other>/.editable``
runs the other one's code with this venv), and ``diff`` the two: the QA pairs in each, the
titles whose pairs changed, how many gained or lost pairs, and a seeded sample of changed titles
with their pairs removed (-) and added (+). Reading that sample is how a rule's side effects on
text it was not written for show up; the counts are the corpus figures the README gives per version.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import defaultdict
from pathlib import Path

Pairs = dict[str, set[tuple[str, tuple[str, ...]]]]


def dump(corpus: Path, out: Path) -> int:
    from engramdb.ingestion.extraction.offline import ChunkText, OfflineExtractor

    passages = json.loads(corpus.read_text())
    extractor = OfflineExtractor()
    gsws = extractor.extract_many([ChunkText(p["text"], p.get("title")) for p in passages])
    lines = 0
    with out.open("w") as f:
        for passage, gsw in zip(passages, gsws, strict=True):
            names = {e.id: e.name for e in gsw.entities}
            for qa in gsw.qa_pairs:
                answers = sorted(names[a] for a in qa.answer_entity_ids)
                f.write(json.dumps([passage.get("title"), qa.question, answers]) + "\n")
                lines += 1
    print(f"{extractor.name} v{extractor.version}: {lines} QA pairs from {len(passages)} passages -> {out}")
    return 0


def load(path: Path) -> tuple[Pairs, int]:
    """A dump's pairs by title, and its number of lines (QA pairs, passage by passage)."""
    by_title: Pairs = defaultdict(set)
    lines = 0
    with path.open() as f:
        for line in f:
            title, question, answers = json.loads(line)
            by_title[title].add((question, tuple(answers)))
            lines += 1
    return by_title, lines


def diff(before: Path, after: Path, show: int, seed: int) -> int:
    a, lines_a = load(before)
    b, lines_b = load(after)
    titles = sorted(set(a) | set(b), key=str)
    changed = [t for t in titles if a.get(t, set()) != b.get(t, set())]
    more = sum(len(b.get(t, ())) > len(a.get(t, ())) for t in changed)
    fewer = sum(len(b.get(t, ())) < len(a.get(t, ())) for t in changed)
    print(f"QA pairs {lines_a:,} -> {lines_b:,}; titles with pairs {len(a):,} -> {len(b):,}")
    print(f"titles changed {len(changed):,} of {len(titles):,}: {more} with more pairs, {fewer} with fewer")
    random.Random(seed).shuffle(changed)
    for title in changed[:show]:
        print(f"== {title}")
        for question, answers in sorted(a.get(title, set()) - b.get(title, set())):
            print(f"  - {question} -> {', '.join(answers)}")
        for question, answers in sorted(b.get(title, set()) - a.get(title, set())):
            print(f"  + {question} -> {', '.join(answers)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump", help="write every QA pair the offline extractor makes of a corpus")
    d.add_argument("corpus", type=Path)
    d.add_argument("out", type=Path)
    c = sub.add_parser("diff", help="compare two dumps")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    c.add_argument("--show", type=int, default=10, help="changed titles to print (seeded sample)")
    c.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.command == "dump":
        if not args.corpus.exists():
            parser.error(f"no corpus file at {args.corpus}")
        return dump(args.corpus, args.out)
    for path in (args.before, args.after):
        if not path.exists():
            parser.error(f"no dump at {path}")
    return diff(args.before, args.after, args.show, args.seed)


if __name__ == "__main__":
    sys.exit(main())

"""Calibrate the offline N/A threshold: best-chain scores of answerable vs absent questions.

    python benchmarks/calibrate_na.py [--namespace bench-musique]

Answerable: the 50 MuSiQue questions with their gold decompositions over the
MuSiQue memory. Absent: the same decompositions with the first hop's subject
replaced by an invented name, so every chain must start from something memory
has never seen. For each candidate threshold it prints the share of answerable
questions still answered and of absent ones refused, and the threshold with the
best balanced accuracy. (The offline answerer's N/A is only as good as this
separation; an LLM answerer decides N/A from the evidence itself.)
"""

from __future__ import annotations

import argparse
import json
import re

from bench_support import SHARED, bench_settings, local_neo4j

from engramdb.ingestion.loaders import load_path
from engramdb.platform.memory import Memory
from engramdb.retrieval.decomposition import PLACEHOLDER, from_musique, make_decomposition

INVENTED = ["Zorblax Quentavian", "Mirelda Vostrikane", "the Ulvenquist Accord", "Port Thessarine"]


def absent_version(sequences: tuple[tuple[str, ...], ...], salt: int) -> list[list[str]]:
    """The decomposition with the capitalised subject of its first hop swapped for an invented name."""
    first = sequences[0][0]
    names = [m.group(0) for m in re.finditer(r"(?:[A-Z][\w'.-]+)(?:\s+(?:of|the|and|de|[A-Z][\w'.-]+))*", first)]
    names = [n for n in names if not PLACEHOLDER.search(n) and n.split()[0] not in {"What", "Who", "When", "Where",
                                                                                       "Which", "How", "In", "The"}]  # fmt: skip
    target = max(names, key=len) if names else None
    fake = INVENTED[salt % len(INVENTED)]
    replaced = first.replace(target, fake) if target else f"{first.rstrip('?')} of {fake}?"
    return [[replaced, *sequences[0][1:]]]


def best_score(memory: Memory, question: str, decomposition) -> float:
    result = memory.ask(question, decomposition=decomposition)
    return max((c.score for c in result.chains), default=0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--namespace", default="bench-musique")
    args = parser.parse_args()
    settings = bench_settings()
    questions = json.loads((SHARED / "data" / "musique" / "questions.json").read_text())
    with local_neo4j(settings), Memory(args.namespace, settings) as memory:
        memory.ingest(load_path(SHARED / "data" / "musique" / "corpus.json"))
        present, absent = [], []
        for i, item in enumerate(questions):
            gold = from_musique(item["question_decomposition"])
            present.append(best_score(memory, item["question"], gold))
            fake = make_decomposition(absent_version(gold.sequences, i))
            absent.append(best_score(memory, fake.sequences[0][0], fake))
    print(f"answerable: median best-chain score {sorted(present)[len(present) // 2]:.3f}")
    print(f"absent:     median best-chain score {sorted(absent)[len(absent) // 2]:.3f}")
    best = (0.0, 0.0)
    for t in [x / 100 for x in range(20, 81, 5)]:
        kept = sum(s >= t for s in present) / len(present)
        refused = sum(s < t for s in absent) / len(absent)
        balanced = (kept + refused) / 2
        best = max(best, (balanced, t))
        print(f"threshold {t:.2f}: answers {kept:.0%} of answerable, refuses {refused:.0%} of absent")
    print(f"best balanced accuracy {best[0]:.1%} at threshold {best[1]:.2f}")


if __name__ == "__main__":
    main()

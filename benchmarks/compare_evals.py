"""Two eval runs side by side, question by question: what a change gained and lost.

    python benchmarks/compare_evals.py BASE NEW [--sets A,B,...] [--tables] [--show]

``BASE`` and ``NEW`` are ``engramdb eval --out`` folders, or folders holding one such folder per
question set (``BASE/A/results.json``, ``BASE/B/results.json``, ...: the README's eval commands run
with ``--out RUN/<set>``). For every set both runs hold, strategy and budget it prints answer in
evidence before -> after with the question-cells gained and lost, offline N/A on answerable
questions, and absent questions refused; then the totals, with and without the sets named by
``--exclude`` (set W, built on the silver passages the extractor's rules are measured on).
``--tables`` prints NEW's rows in the README's table form; ``--show`` names every question that
changed. Why per question and not per row: two homes of the same code differ by a question in a row
now and then, so a row that moved says little until the questions that moved are read.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

STRATEGIES = ("chain", "diffusion", "hypergraph", "cluster", "dense", "bm25")
BUDGETS = (128, 256, 512)
Records = dict[tuple[str, str], dict[str, Any]]


def load(folder: Path) -> Records:
    """The per-question records of one eval run, by (``strategy@budget``, question id)."""
    data = json.loads((folder / "results.json").read_text())
    return {(r["strategy"], r["item_id"]): r for r in data["records"]}


def run_sets(root: Path) -> dict[str, Path]:
    """The eval folders under ``root`` by set name (``root`` itself when it is one)."""
    if (root / "results.json").exists():
        return {root.name: root}
    return {p.parent.name: p.parent for p in sorted(root.glob("*/results.json"))}


def compare_cell(base: Records, new: Records, name: str) -> dict[str, int]:
    """Counts for one ``strategy@budget`` over the questions both runs asked."""
    keys = [k for k in base if k[0] == name and k in new]
    answerable = [k for k in keys if base[k]["answerable"]]
    absent = [k for k in keys if not base[k]["answerable"]]
    held = [k for k in answerable if base[k]["answer_in_evidence"]]
    held_new = [k for k in answerable if new[k]["answer_in_evidence"]]
    return {
        "answerable": len(answerable),
        "held_base": len(held),
        "held_new": len(held_new),
        "gained": len(set(held_new) - set(held)),
        "lost": len(set(held) - set(held_new)),
        "na_base": sum(bool(base[k]["refused"]) for k in answerable),
        "na_new": sum(bool(new[k]["refused"]) for k in answerable),
        "absent": len(absent),
        "refused_base": sum(bool(base[k]["refused"]) for k in absent),
        "refused_new": sum(bool(new[k]["refused"]) for k in absent),
    }


def changed_questions(base: Records, new: Records, name: str) -> list[tuple[str, str]]:
    """("gained" | "lost", question) for every answerable question whose answer in evidence changed."""
    out = []
    for key, rec in base.items():
        if key[0] == name and key in new and rec["answerable"]:
            was, now = rec["answer_in_evidence"], new[key]["answer_in_evidence"]
            if was != now:
                out.append(("gained" if now else "lost", rec["question"]))
    return out


def _pct(n: int, d: int) -> float:
    return 100.0 * n / d if d else 0.0


def table(records: Records) -> list[str]:
    """The README's table of one set: answer in evidence per budget, then N/A on answerable."""
    lines = [
        "| strategy | @128 ans∈evid | @256 | @512 | N/A on answerable @128 / @256 / @512 |",
        "|---|---|---|---|---|",
    ]
    for strategy in STRATEGIES:
        cells = [compare_cell(records, records, f"{strategy}@{b}") for b in BUDGETS]
        if not any(c["answerable"] for c in cells):
            continue
        held = " | ".join(f"{_pct(c['held_new'], c['answerable']):.1f}%" for c in cells)
        na = " / ".join(f"{_pct(c['na_new'], c['answerable']):.1f}" for c in cells)
        lines.append(f"| {strategy} | {held} | {na}% |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("base", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--sets", help="comma-separated set names (default: every set both runs hold)")
    parser.add_argument("--exclude", default="W", help="sets left out of the second total (default: W)")
    parser.add_argument("--tables", action="store_true", help="print NEW's rows as README tables")
    parser.add_argument("--show", action="store_true", help="name every question that changed")
    args = parser.parse_args(argv)
    base_sets, new_sets = run_sets(args.base), run_sets(args.new)
    names = [s for s in base_sets if s in new_sets]
    if args.sets:
        wanted = args.sets.split(",")
        names = [s for s in wanted if s in names]
    if not names:
        parser.error(f"no question set is in both {args.base} and {args.new}")
    excluded = set(args.exclude.split(",")) if args.exclude else set()
    totals: Counter[str] = Counter()
    for name in names:
        base, new = load(base_sets[name]), load(new_sets[name])
        print(f"{name}:")
        for strategy in STRATEGIES:
            cells = []
            for budget in BUDGETS:
                cell = f"{strategy}@{budget}"
                c = compare_cell(base, new, cell)
                if not c["answerable"]:
                    continue
                totals["gained"] += c["gained"]
                totals["lost"] += c["lost"]
                if name not in excluded:
                    totals["gained_kept"] += c["gained"]
                    totals["lost_kept"] += c["lost"]
                cells.append(
                    f"@{budget} {_pct(c['held_base'], c['answerable']):.1f} -> "
                    f"{_pct(c['held_new'], c['answerable']):.1f}% (+{c['gained']} -{c['lost']}; "
                    f"N/A {c['na_base']} -> {c['na_new']}; absent refused {c['refused_base']} -> "
                    f"{c['refused_new']} of {c['absent']})"
                )
                if args.show:
                    for change, question in changed_questions(base, new, cell):
                        cells.append(f"    {change} at {budget}: {question}")
            if cells:
                print(f"  {strategy}: " + "\n    ".join(cells))
        if args.tables:
            print("\n".join(table(new)))
    print(
        f"question-cells gained {totals['gained']}, lost {totals['lost']}; without "
        f"{', '.join(sorted(excluded)) or 'none'}: gained {totals['gained_kept']}, lost {totals['lost_kept']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

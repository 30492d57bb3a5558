"""Ask latency at a token budget against the code as it was before budgets existed, in one run.

    python benchmarks/bench_budget_vs_release.py [--baseline bcdf8c5] [--budget 256] [--rounds 2]
                                                 [--limit 50] [--warmup 50] [--strategies a,b] [--out FILE]

Why a second benchmark beside ``bench_budget.py``: that one compares a budgeted
ask with an unbudgeted one *of the same code*, so anything that speeds up both
(a shared answerer, fewer reads) leaves its ratio unchanged. The promise is about
what users had: an ask at budget 256 now against an ask of the release before
budgets (commit ``--baseline``, checked out into a temporary git worktree).

Both codes read the same memory (the MuSiQue corpus, offline, every default
stage, in the benchmark home; ingested first by the current code). The embedded
vector store has one owner, so the two run as alternating processes, each timing
every question with every strategy after a warm-up: baseline, current, current,
baseline, ... for ``--rounds`` pairs, so drifts in machine load fall on both.
Reported per strategy: medians and p95 of each, and the ratio of the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_support import (
    REPO,
    SHARED,
    bench_settings,
    forget_question_vectors,
    local_neo4j,
    median,
    percentile,
)

PACKAGE_FOLDERS = ("cypher", "ingestion", "platform", "retrieval")


def worker(args: argparse.Namespace) -> None:
    """One process: time each question with each strategy (``--budget`` or none), write JSON."""
    from engramdb.platform.interfaces.memory import Memory
    from engramdb.retrieval.strategy import strategy_names

    settings = bench_settings()
    questions = json.loads((SHARED / "data" / "musique" / "questions.json").read_text())[: args.limit]
    options = {} if args.budget is None else {"budget": args.budget}
    names = args.strategies.split(",") if args.strategies else strategy_names()
    out: dict[str, list[float]] = {}
    with Memory("bench-budget", settings) as memory:
        # Every strategy warms up before any is timed, on questions of its own: with one warm-up ask
        # each, the first strategy timed paid for Neo4j compiling the process's first queries (bm25
        # first: 2.46x its release; second: 1.15x, in runs minutes apart), and warming up on the
        # timed questions themselves would time cached question vectors.
        warmups = [f"Who or what is {title}?" for title in warmup_titles(args.warmup)]
        for name in names:
            for question in warmups:
                memory.ask(question, strategy=name, **options)
        for name in names:
            # Each strategy embeds the timed questions afresh: the embedder (one per process) keeps
            # recent question vectors, so bm25 timed after chain got chain's vectors for nothing
            # (6.6 ms against 13.5 ms timed first).
            forget_question_vectors(memory.embedder)
            times = []
            for item in questions:
                started = time.perf_counter()
                memory.ask(item["question"], strategy=name, **options)
                times.append((time.perf_counter() - started) * 1000)
            out[name] = times
    Path(args.worker_out).write_text(json.dumps(out))


def warmup_titles(count: int) -> list[str]:
    """Titles of the corpus's first ``count`` documents: warm-up questions that are not timed ones."""
    corpus = json.loads((SHARED / "data" / "musique" / "corpus.json").read_text())
    return [doc["title"] for doc in corpus[:count]]


def package_view(checkout: Path) -> Path:
    """A folder that imports as ``engramdb`` from ``checkout`` (what the editable install builds)."""
    view = checkout / ".bench-view"
    package = view / "engramdb"
    package.mkdir(parents=True, exist_ok=True)
    links = {"__init__.py": checkout / "platform" / "package_root.py"}
    links |= {name: checkout / name for name in PACKAGE_FOLDERS}
    for name, target in links.items():
        if not (package / name).exists():
            (package / name).symlink_to(target)
    return view


def run_worker(view: Path, budget: int | None, args: argparse.Namespace, out: Path) -> dict[str, list[float]]:
    command = [
        sys.executable,
        __file__,
        "--worker-out",
        str(out),
        "--limit",
        str(args.limit),
        "--warmup",
        str(args.warmup),
    ]
    command += ["--budget", str(budget)] if budget is not None else ["--no-budget"]
    command += ["--strategies", args.strategies] if args.strategies else []
    env = {**os.environ, "PYTHONPATH": str(view)}
    subprocess.run(command, check=True, env=env, cwd=REPO / "benchmarks")
    return json.loads(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline", default="bcdf8c5", help="the commit before budgets existed")
    parser.add_argument("--budget", type=int, default=256)
    parser.add_argument("--no-budget", dest="budget", action="store_const", const=None)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument(
        "--warmup", type=int, default=50, help="warm-up questions each strategy asks before any is timed"
    )
    parser.add_argument("--strategies", help="comma-separated strategy names (default: every one)")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--worker-out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker_out:
        worker(args)
        return
    settings = bench_settings()
    with tempfile.TemporaryDirectory(prefix="engramdb-baseline-") as tmp, local_neo4j(settings):
        base = Path(tmp) / "checkout"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(base), args.baseline],
                       check=True)  # fmt: skip
        try:
            from engramdb.ingestion.loaders import load_path
            from engramdb.platform.interfaces.memory import Memory

            with Memory("bench-budget", settings) as memory:  # the current code builds the memory once
                memory.ingest(load_path(SHARED / "data" / "musique" / "corpus.json"))
            views = {"baseline": package_view(base), "current": REPO / ".editable"}
            budgets = {"baseline": None, "current": args.budget}
            runs: dict[str, dict[str, list[float]]] = {"baseline": {}, "current": {}}
            for r in range(args.rounds):
                for which in ("baseline", "current") if r % 2 == 0 else ("current", "baseline"):
                    times = run_worker(views[which], budgets[which], args, Path(tmp) / f"{which}-{r}.json")
                    for name, values in times.items():
                        runs[which].setdefault(name, []).extend(values)
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(base)], check=False)
    results = {}
    for name, current in runs["current"].items():
        baseline = runs["baseline"].get(name, [])
        row = {
            "baseline_p50_ms": median(baseline), "baseline_p95_ms": percentile(baseline, 95),
            "budget_p50_ms": median(current), "budget_p95_ms": percentile(current, 95),
        }  # fmt: skip
        row["ratio_p50"] = row["budget_p50_ms"] / row["baseline_p50_ms"]
        results[name] = row
        print(f"{name:<11} {args.baseline} p50 {row['baseline_p50_ms']:7.1f} ms  now @{args.budget} p50 "
              f"{row['budget_p50_ms']:7.1f} ms  ratio {row['ratio_p50']:.2f}", flush=True)  # fmt: skip
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

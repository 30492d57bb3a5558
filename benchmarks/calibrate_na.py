"""The offline N/A threshold of chain search: how the per-memory calibration does, and a dev check.

    python benchmarks/calibrate_na.py [--namespace bench-musique] [--probes 30] [--false-accept 0.2]
    python benchmarks/calibrate_na.py --passage-bar [--corpus FILE] [--samples 40,120] [--seeds 5]

Chain search calibrates its N/A threshold on each memory from probes the memory
itself provides (``retrieval/na_calibration.py``): questions rebuilt from
stored QA pairs (verbatim, and reworded in the decomposers' templates) as
answerable, the reworded ones with invented names as unanswerable. This command
builds (or reuses) the MuSiQue memory, runs that calibration afresh and prints
what it found: the threshold and its rule, the share of absent probes refused
and of answerable probes answered, in the calibration's own sample and on a
fresh draw of probes (another seed).

Then, as a check only (nothing here feeds back into the threshold), it asks the
50 MuSiQue dev questions with their gold decompositions and reports the N/A
rate on them (answerable questions) and how often the gold answer is in the
evidence, at the calibrated threshold and at the former fixed 0.50.

``--passage-bar`` measures instead the bar of the offline answer from passages
(``retrieval/evidence_answer.py``: dense, bm25, cluster, diffusion with a
budget): the median score of absent probes, drawn ``--seeds`` times with other
seeds at each sample size, so the spread between draws says how much of a bar is
the luck of its sample, and what a larger sample costs. ``--corpus`` builds the
memory from another corpus (e.g. a held-out set's ``corpus.json``) in its own namespace.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from bench_support import SHARED, bench_settings, local_neo4j

from engramdb.ingestion.loaders import load_path
from engramdb.platform.interfaces.memory import Memory
from engramdb.retrieval.decomposition import from_musique
from engramdb.retrieval.evidence_answer import EvidenceAnswerer
from engramdb.retrieval.metrics import answer_in_text
from engramdb.retrieval.na_calibration import build_probes, calibrate, namespace_seed, run_probes
from engramdb.retrieval.rerankers import OfflineReranker
from engramdb.retrieval.strategy import AskContext


def quantiles(values: list[float]) -> str:
    if not values:
        return "-"
    q = statistics.quantiles(values, n=10) if len(values) > 1 else values * 9
    return f"p10 {q[0]:.3f}  median {statistics.median(values):.3f}  p90 {q[-1]:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--namespace", default="bench-musique")
    parser.add_argument("--probes", type=int, default=30)
    parser.add_argument("--false-accept", type=float, default=0.2)
    parser.add_argument("--passage-bar", action="store_true", help="the passage answer's bar, draw by draw")
    parser.add_argument("--corpus", type=Path, help="with --passage-bar: the corpus (default MuSiQue's)")
    parser.add_argument("--samples", default="40,120", help="with --passage-bar: probe counts compared")
    parser.add_argument("--seeds", type=int, default=5, help="with --passage-bar: draws per probe count")
    parser.add_argument(
        "--budget", type=int, default=256, help="with --passage-bar: the probes' token budget"
    )
    args = parser.parse_args()
    settings = bench_settings()
    if args.passage_bar:
        corpus = args.corpus or SHARED / "data" / "musique" / "corpus.json"
        namespace = args.namespace if args.corpus is None else f"bench-bar-{corpus.parent.name}"
        with local_neo4j(settings), Memory(namespace, settings) as memory:
            memory.ingest(load_path(corpus))
            passage_bar_spread(memory, [int(n) for n in args.samples.split(",")], args.seeds, args.budget)
        return
    questions = json.loads((SHARED / "data" / "musique" / "questions.json").read_text())
    with local_neo4j(settings), Memory(args.namespace, settings) as memory:
        memory.ingest(load_path(SHARED / "data" / "musique" / "corpus.json"))
        chain = memory.strategy("chain", na_probes=args.probes, na_false_accept=args.false_accept)
        cal = calibrate(
            memory.graph, memory.embedder, chain.best_chains, probes=args.probes,
            false_accept=args.false_accept, seed=namespace_seed(memory.namespace), with_verbatim=True,
        )  # fmt: skip
        print(
            f"calibration on {memory.namespace!r} ({cal.seconds:.1f} s): threshold {cal.threshold:.3f} ({cal.rule})"
        )
        print(f"  absent probes ({len(cal.absent_scores)}):          {quantiles(cal.absent_scores)}")
        print(f"  reworded answerable ({len(cal.answerable_scores)}):   {quantiles(cal.answerable_scores)}")
        print(f"  verbatim answerable ({len(cal.verbatim_scores)}):   {quantiles(cal.verbatim_scores)}")
        print(f"  refusal accuracy on absent probes: {cal.refusal_rate:.0%}")
        print(f"  answered: reworded {cal.answer_rate:.0%}, verbatim {cal.verbatim_answer_rate:.0%}; "
              f"best chain ends at the stored answer: reworded {cal.answered_correctly}/{len(cal.answerable_scores)}, "
              f"verbatim {cal.verbatim_correct}/{len(cal.verbatim_scores)}")  # fmt: skip
        print(f"  probe accuracy (absent refused + reworded answered): {cal.probe_accuracy:.0%}")
        # the same kinds of probes drawn afresh (another seed): the rates out of the calibration's sample
        fresh = build_probes(memory.graph, memory.embedder, args.probes, namespace_seed(memory.namespace) + 1)
        absent = [s for s, _ in run_probes(chain.best_chains, fresh.absent)]
        reworded = [s for s, _ in run_probes(chain.best_chains, fresh.reworded)]
        print(f"  fresh probes: refuses {sum(s < cal.threshold for s in absent) / max(len(absent), 1):.0%} "
              f"of {len(absent)} absent, answers {sum(s >= cal.threshold for s in reworded) / max(len(reworded), 1):.0%} "
              f"of {len(reworded)} reworded answerable")  # fmt: skip

        best_scores, in_evidence = [], []
        for item in questions:  # the dev check: never used to choose anything above
            result = chain.ask(item["question"], decomposition=from_musique(item["question_decomposition"]))
            best = max(result.chains, key=lambda c: c.score, default=None)
            best_scores.append(best.support if best is not None else 0.0)  # what the offline answerer checks
            gold = [item["answer"], *item.get("answer_aliases", [])]
            in_evidence.append(answer_in_text(gold, [e.text for e in result.evidence]))
    n = len(questions)
    print(f"\ndev check, {n} answerable MuSiQue questions, gold decompositions:")
    for label, threshold in (("calibrated", cal.threshold), ("fixed 0.50", 0.5)):
        na = sum(s < threshold for s in best_scores) / n
        print(f"  {label} threshold {threshold:.3f} on the best chain's weakest hop: N/A rate {na:.0%}")
    print(f"  gold answer in the evidence: {sum(in_evidence) / n:.0%}")


def passage_bar_spread(memory: Memory, samples: list[int], seeds: int, budget: int) -> None:
    """The passage answer's N/A bar drawn ``seeds`` times per sample size: its spread and its cost."""
    context = AskContext(memory.graph, memory.vectors, memory.embedder, OfflineReranker())
    base = namespace_seed(memory.namespace)
    print(f"passage-answer N/A bar on {memory.namespace!r}, budget {budget}, {seeds} draws per sample size")
    for count in samples:
        bars, seconds = [], []
        for k in range(seeds):
            answerer = EvidenceAnswerer(context, na_sample=count, budget=budget, seed=base + k)
            started = time.perf_counter()
            bars.append(answerer.na_threshold())
            seconds.append(time.perf_counter() - started)
        print(f"  {count:4d} probes: bars {' '.join(f'{b:.3f}' for b in bars)}; "
              f"sd {statistics.pstdev(bars):.4f}, range {max(bars) - min(bars):.3f}; "
              f"median {statistics.median(seconds):.2f} s per calibration")  # fmt: skip


if __name__ == "__main__":
    main()

"""Write an evaluation's results: per-question JSON, a Markdown table, PNG plots."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engramdb.retrieval.eval.harness import Record, records_as_dicts

COLUMNS = [
    ("strategy", "strategy", "{}"), ("questions", "n", "{}"), ("em", "EM", "{:.1%}"), ("f1", "F1", "{:.1%}"),
    ("recall@2", "R@2", "{:.1%}"), ("recall@5", "R@5", "{:.1%}"), ("answer_in_evidence", "ans∈evid", "{:.1%}"),
    ("evidence_tokens_mean", "tokens", "{:.0f}"), ("latency_p50_ms", "p50 ms", "{:.0f}"),
    ("latency_p95_ms", "p95 ms", "{:.0f}"), ("refusal_accuracy", "refusal acc", "{:.1%}"),
    ("na_rate_answerable", "N/A rate", "{:.1%}"),
]  # fmt: skip


def markdown_table(summary: Sequence[dict[str, Any]]) -> str:
    shown = [c for c in COLUMNS if any(row.get(c[0]) is not None for row in summary)]
    lines = ["| " + " | ".join(h for _, h, _ in shown) + " |", "|" + "---|" * len(shown)]
    for row in summary:
        cells = ["—" if row.get(k) is None else fmt.format(row[k]) for k, _, fmt in shown]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_report(
    out_dir: Path, meta: dict[str, Any], summary: list[dict[str, Any]], records: Sequence[Record]
) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"json": out_dir / "results.json", "markdown": out_dir / "summary.md"}
    paths["json"].write_text(json.dumps({"meta": meta, "summary": summary, "records": records_as_dicts(records)},
                                        indent=2, default=str))  # fmt: skip
    lines = [f"# engramdb eval — {meta.get('dataset', '')}", "", _describe(meta), "", *budget_tables(summary),
             "ans∈evid: share of answerable questions whose gold answer (or an alias) appears in the evidence "
             "given to the reader. tokens: mean evidence size (WordPiece tokens). name@k: a passage baseline "
             "at top-k (its plain name is its own top-k, 5 by default); compare strategies at equal tokens.", ""]  # fmt: skip
    paths.update(_plots(out_dir, summary, records))
    lines += [f"![{name}]({path.name})" for name, path in paths.items() if path.suffix == ".png"]
    paths["markdown"].write_text("\n".join(lines) + "\n")
    return paths


def budget_tables(summary: Sequence[dict[str, Any]]) -> list[str]:
    """One Markdown table per evidence-token budget (``## Budget 256 tokens``), or one table when
    the run had no budgets; each followed by a blank line."""
    budgets = list(dict.fromkeys(row.get("token_budget") for row in summary))
    if budgets == [None]:
        return [markdown_table(summary), ""]
    out: list[str] = []
    for budget in budgets:
        rows = [row for row in summary if row.get("token_budget") == budget]
        out += [
            f"## Budget {budget} tokens" if budget is not None else "## No budget",
            "",
            markdown_table(rows),
            "",
        ]
    return out


def _describe(meta: dict[str, Any]) -> str:
    parts = [f"{k}: {v}" for k, v in meta.items() if k != "dataset"]
    return "; ".join(parts)


def token_curves(summary: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Summary rows grouped by strategy family, each group ordered by evidence tokens.

    A passage baseline run at several budgets is one family with several rows
    (one curve); every other strategy is a family of one row (one point).
    """
    families: dict[str, list[dict[str, Any]]] = {}
    for row in summary:
        families.setdefault(str(row.get("family") or row["strategy"]), []).append(row)
    return {name: sorted(rows, key=lambda r: r["evidence_tokens_mean"]) for name, rows in families.items()}


def _plots(out_dir: Path, summary: list[dict[str, Any]], records: Sequence[Record]) -> dict[str, Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths: dict[str, Path] = {}
    fig, ax = plt.subplots(figsize=(7.2, 4.8))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for n, (family, rows) in enumerate(token_curves(summary).items()):
        color = colors[n % len(colors)]
        tokens = [r["evidence_tokens_mean"] for r in rows]
        quality = [100 * (r["answer_in_evidence"] or 0.0) for r in rows]
        if len(rows) > 1:  # a passage baseline at several budgets: a curve, each point marked with its k
            by_tokens = rows[0].get("token_budget") is not None
            ax.plot(
                tokens,
                quality,
                "-o",
                color=color,
                markersize=5,
                label=family if by_tokens else f"{family} (top-k)",
            )
            for row, x, y in zip(rows, tokens, quality, strict=True):
                ax.annotate(f"{row.get('token_budget') or row['budget']}", (x, y), textcoords="offset points", xytext=(4, -11), fontsize=8,
                            color=color)  # fmt: skip
        else:
            ax.scatter(tokens, quality, s=80, color=color, label=family, zorder=3)
            ax.annotate(family, (tokens[0], quality[0]), textcoords="offset points", xytext=(6, 6))
        f1 = [(x, 100 * r["f1"]) for r, x in zip(rows, tokens, strict=True) if r.get("f1") is not None]
        if f1:
            ax.plot(*zip(*f1, strict=True), "--x" if len(f1) > 1 else "x", color=color, markersize=7)
    ax.set_xlabel("evidence tokens per question (mean)")
    ax.set_ylabel("% of questions (●: answer in evidence, ×: F1)")
    budgeted = any(row.get("token_budget") for row in summary)
    ax.set_title(
        "Quality against evidence size (every strategy at each token budget)"
        if budgeted
        else "Quality against evidence size (baselines at top-1, 2, 3, 5)"
    )
    ax.set_ylim(0, 100)
    ax.set_xlim(left=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    paths["quality_vs_tokens"] = out_dir / "quality_vs_tokens.png"
    fig.tight_layout()
    fig.savefig(paths["quality_vs_tokens"], dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    names = [str(row["strategy"]) for row in summary]
    ax.boxplot([[r.latency_ms for r in records if r.strategy == n] for n in names], showfliers=True)
    ax.set_xticks(range(1, len(names) + 1), names, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("latency per question (ms)")
    ax.set_title("Latency distribution")
    ax.grid(alpha=0.3, axis="y")
    paths["latency"] = out_dir / "latency.png"
    fig.tight_layout()
    fig.savefig(paths["latency"], dpi=120)
    plt.close(fig)
    return paths

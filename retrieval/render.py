"""Human-readable ``ask`` output for the terminal, including the hop-by-hop trace."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from engramdb.retrieval.results import AskResult

MAX_CANDIDATES_SHOWN = 8


def render_result(console: Console, result: AskResult, trace: bool = False) -> None:
    if trace:
        render_trace(console, result)
    console.print(f"[bold]Question:[/] {escape(result.question)}", highlight=False)
    for i, seq in enumerate(result.decomposition, start=1):
        console.print(f"  sequence {i}: " + escape("  →  ".join(seq)), highlight=False)
    console.print(f"[bold green]Answer:[/] {escape(result.answer)}", highlight=False)
    table = Table(title=f"Evidence ({result.evidence_tokens} tokens)", show_lines=False)
    table.add_column("score", justify="right")
    table.add_column("QA pair")
    table.add_column("source")
    sources = {c.qa_id: c.title or c.doc_id for c in result.citations}
    for e in result.evidence:
        table.add_row(f"{e.score:.3f}", escape(e.text), escape(sources.get(e.qa_id, e.doc_id)))
    console.print(table)
    total = result.timings.get("total", 0.0) * 1000
    console.print(f"[dim]{len(result.chains)} chains, {total:.0f} ms[/]")


def render_trace(console: Console, result: AskResult) -> None:
    for hop in result.trace:
        console.rule(f"sequence {hop.sequence + 1}, hop {hop.hop}")
        for query in hop.queries:
            console.print(f"[cyan]query[/] {escape(query)}", highlight=False)
        shown = sorted(hop.candidates, key=lambda c: -c[2])[:MAX_CANDIDATES_SHOWN]
        for query, text, score in shown:
            console.print(f"  [dim]candidate[/] {score:.3f}  {escape(text)}  [dim]({escape(query)})[/]", highlight=False)
        if len(hop.candidates) > MAX_CANDIDATES_SHOWN:
            console.print(f"  [dim]... {len(hop.candidates) - MAX_CANDIDATES_SHOWN} more candidates[/]")
        for summary, score in hop.kept:
            console.print(f"  [green]kept[/]   {score:.3f}  {escape(summary)}", highlight=False)
        for summary, score in hop.pruned[:MAX_CANDIDATES_SHOWN]:
            console.print(f"  [red]pruned[/] {score:.3f}  {escape(summary)}", highlight=False)
        if len(hop.pruned) > MAX_CANDIDATES_SHOWN:
            console.print(f"  [dim]... {len(hop.pruned) - MAX_CANDIDATES_SHOWN} more pruned[/]")

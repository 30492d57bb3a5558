"""Human-readable ``ask`` output for the terminal: answer, evidence, and each strategy's details.

Every strategy's result prints the same way (question, answer and where it
came from, an evidence table with sources); what only one strategy has is
printed by the renderer registered for its ``details`` kind, so a new strategy
adds one function here (or registers one from its own module) and nothing else.

Everything printed here that came from memory or the user goes through :func:`_literal`:
markup escaped (a ``[bold]`` in a title stays text) and control characters made visible
(an ``ESC ]0;... BEL`` in a document must not retitle the reader's terminal).
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from engramdb.platform.text_safety import visible
from engramdb.retrieval.grounding import split_grounded
from engramdb.retrieval.results import AskResult, ChainDetails, Details, PassageDetails

MAX_CANDIDATES_SHOWN = 8
DetailsRenderer = Callable[[Console, Details], None]
_RENDERERS: dict[str, DetailsRenderer] = {}


def register_renderer(kind: str) -> Callable[[DetailsRenderer], DetailsRenderer]:
    """Decorator: print ``details`` of this kind under ``ask --trace``."""

    def add(func: DetailsRenderer) -> DetailsRenderer:
        _RENDERERS[kind] = func
        return func

    return add


def _literal(text: str) -> str:
    """Stored or user text ready for rich markup: control characters visible, markup escaped."""
    return escape(visible(text))


def render_result(console: Console, result: AskResult, trace: bool = False) -> None:
    if trace and result.details.kind in _RENDERERS:
        _RENDERERS[result.details.kind](console, result.details)
    console.print(
        f"[bold]Question:[/] {_literal(result.question)}  [dim](strategy {_literal(result.strategy)})[/]",
        highlight=False,
    )
    for i, seq in enumerate(result.decomposition, start=1):
        console.print(f"  sequence {i}: " + _literal("  →  ".join(seq)), highlight=False)
    if result.decomposed_by:
        console.print(f"  [dim]sub-questions from: {_literal(result.decomposed_by)}[/]", highlight=False)
    if result.answer is None:
        console.print(
            "[bold]Answer:[/] none — this strategy retrieves only (configure an LLM to read the evidence)"
        )
    elif result.is_na:
        console.print(
            "[bold yellow]Answer: N/A[/] — no evidence in memory supports an answer", highlight=False
        )
    else:
        console.print(
            f"[bold green]Answer:[/] {_literal(result.answer)}  [dim](by {_literal(result.answered_by)})[/]",
            highlight=False,
        )
    for note in result.notes:
        console.print(f"  [yellow]note:[/] {_literal(note)}", highlight=False)
    # After N/A, what was retrieved did not support an answer: never show it as "Evidence".
    supporting = [] if result.is_na else result.evidence
    near = list({e.id: e for e in [*result.near_misses, *(result.evidence if result.is_na else [])]}.values())
    if supporting:
        console.print(_evidence_table(result, f"Evidence ({result.evidence_tokens} tokens)", supporting))
    if near:
        console.print(
            _evidence_table(result, "Near misses (retrieved, but they do not support an answer)", near)
        )
    total = result.timings.get("total", 0.0) * 1000
    console.print(f"[dim]{len(result.evidence)} evidence items, {total:.0f} ms[/]")


def _evidence_table(result: AskResult, title: str, items: list) -> Table:
    table = Table(title=title, show_lines=False)
    table.add_column("score", justify="right")
    table.add_column("kind")
    table.add_column("evidence")
    table.add_column("source")
    sources = {c.evidence_id: c.title or c.doc_id for c in result.citations}
    for e in items:
        # A grounded QA pair: the pair, then (dimmed, on its own line) the sentence it was drawn from.
        pair, sentence = split_grounded(e)
        text = _literal(_clip(pair)) + (f'\n[dim]from "{_literal(_clip(sentence))}"[/]' if sentence else "")
        table.add_row(f"{e.score:.3f}", _literal(e.kind), text, _literal(sources.get(e.id, e.doc_id)))
    return table


def _clip(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


@register_renderer("chain")
def render_chain_trace(console: Console, details: Details) -> None:
    assert isinstance(details, ChainDetails)
    for hop in details.trace:
        console.rule(f"sequence {hop.sequence + 1}, hop {hop.hop}")
        for query in hop.queries:
            console.print(f"[cyan]query[/] {_literal(query)}", highlight=False)
        shown = sorted(hop.candidates, key=lambda c: -c[2])[:MAX_CANDIDATES_SHOWN]
        for query, text, score in shown:
            console.print(
                f"  [dim]candidate[/] {score:.3f}  {_literal(text)}  [dim]({_literal(query)})[/]",
                highlight=False,
            )
        if len(hop.candidates) > MAX_CANDIDATES_SHOWN:
            console.print(f"  [dim]... {len(hop.candidates) - MAX_CANDIDATES_SHOWN} more candidates[/]")
        for summary, score in hop.kept:
            console.print(f"  [green]kept[/]   {score:.3f}  {_literal(summary)}", highlight=False)
        for summary, score in hop.pruned[:MAX_CANDIDATES_SHOWN]:
            console.print(f"  [red]pruned[/] {score:.3f}  {_literal(summary)}", highlight=False)
        if len(hop.pruned) > MAX_CANDIDATES_SHOWN:
            console.print(f"  [dim]... {len(hop.pruned) - MAX_CANDIDATES_SHOWN} more pruned[/]")
    if details.na:
        console.print(_na_line(details.na), highlight=False)


def _na_line(na: dict) -> str:
    """The offline N/A bar and, when calibrated on this memory, how it was set."""
    line = f"[dim]N/A below a weakest-hop score of {na.get('threshold', 0.0):.3f}"
    report = na.get("calibration") or {}
    if report:
        line += (
            f" (calibrated on this memory: {_literal(str(report.get('rule', '')))}; refuses "
            f"{report.get('refusal_rate', 0):.0%} of {report.get('absent_probes', 0)} absent probes, answers "
            f"{report.get('answer_rate', 0):.0%} of {report.get('answerable_probes', 0)} answerable ones)"
        )
    return line + "[/]"


@register_renderer("passages")
def render_passage_scores(console: Console, details: Details) -> None:
    assert isinstance(details, PassageDetails)
    console.rule(f"passages by {_literal(details.method)}")
    for row in details.scores:
        parts = "  ".join(
            f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={_literal(str(v))}" for k, v in row.items()
        )
        console.print(f"  {parts}", highlight=False)

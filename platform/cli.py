"""The ``engramdb`` command line (click).

Errors that engramdb raises on purpose print as one line, ``error: ...``, and
exit with status 1; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.table import Table

from engramdb.platform.config import Settings
from engramdb.platform.errors import EngramError

F = TypeVar("F", bound=Callable[..., Any])
console = Console()
err_console = Console(stderr=True)


def friendly_errors(func: F) -> F:
    """Turn EngramError (and bad settings) into a one-line message and exit code 1."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from pydantic import ValidationError

        try:
            return func(*args, **kwargs)
        except EngramError as exc:
            err_console.print(f"[bold red]error:[/] {exc}", highlight=False, markup=True)
            sys.exit(1)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            err_console.print(f"[bold red]error:[/] invalid settings: {problems}", highlight=False)
            sys.exit(1)

    return wrapper  # type: ignore[return-value]


class Context:
    """Settings built once per invocation from options, environment and TOML."""

    def __init__(self, home: Path | None, namespace: str | None) -> None:
        self.overrides: dict[str, Any] = {}
        if home is not None:
            self.overrides["home"] = home
        if namespace is not None:
            self.overrides["namespace"] = namespace

    def settings(self) -> Settings:
        return Settings(**self.overrides)


pass_context = click.make_pass_decorator(Context)


@click.group()
@click.option("--home", type=click.Path(path_type=Path), help="Data home (default: per-user data dir).")
@click.option("-n", "--namespace", help="Memory namespace (default: 'default').")
@click.version_option(package_name="engramdb")
@click.pass_context
def main(ctx: click.Context, home: Path | None, namespace: str | None) -> None:
    """engramdb: structured memory for LLMs (Neo4j + Qdrant)."""
    ctx.obj = Context(home, namespace)


# ----------------------------------------------------------------- neo4j
@main.group()
def neo4j() -> None:
    """Manage the local Neo4j 5.26 server."""


@neo4j.command("install")
@pass_context
@friendly_errors
def neo4j_install(ctx: Context) -> None:
    """Fetch the Neo4j server, Bolt and Browser jars from Maven Central (once)."""
    from engramdb.platform.neo4j_server import LocalNeo4j

    server = LocalNeo4j(ctx.settings())
    if server.is_installed():
        console.print(f"Neo4j jars already in {server.lib}")
        return
    with err_console.status("Fetching Neo4j jars from Maven Central..."):
        server.install()
    console.print(f"Neo4j jars installed in {server.lib}")


@neo4j.command("start")
@pass_context
@friendly_errors
def neo4j_start(ctx: Context) -> None:
    """Install (first time) and start the local server; wait until Bolt answers."""
    from engramdb.platform.neo4j_server import LocalNeo4j

    settings = ctx.settings()
    _refuse_if_external(settings)
    server = LocalNeo4j(settings)
    if not server.is_installed():
        err_console.print("Fetching Neo4j jars from Maven Central (first start only)...")
    with err_console.status("Starting Neo4j..."):
        status = server.start()
    console.print(f"Neo4j running (pid {status.pid})")
    console.print(f"  Bolt:    {status.bolt_uri}  (user neo4j, password in {server.password_file})")
    console.print(f"  Browser: {status.browser_url}")


@neo4j.command("stop")
@pass_context
@friendly_errors
def neo4j_stop(ctx: Context) -> None:
    """Stop the local server (SIGTERM, then wait)."""
    from engramdb.platform.neo4j_server import LocalNeo4j

    settings = ctx.settings()
    _refuse_if_external(settings)
    stopped = LocalNeo4j(settings).stop()
    console.print("Neo4j stopped" if stopped else "Neo4j was not running")


@neo4j.command("status")
@pass_context
@friendly_errors
def neo4j_status(ctx: Context) -> None:
    """Show whether the local server is installed and running."""
    from engramdb.platform.neo4j_server import LocalNeo4j

    settings = ctx.settings()
    if not settings.uses_local_neo4j:
        console.print(f"external Neo4j configured: {settings.neo4j_uri} (no local server is used)")
        return
    status = LocalNeo4j(settings).status()
    console.print(f"installed: {'yes' if status.installed else 'no'}")
    running = f"yes (pid {status.pid})" if status.running else "no"
    console.print(f"running:   {running}")
    console.print(f"bolt:      {status.bolt_uri}")
    console.print(f"browser:   {status.browser_url}")
    console.print(f"home:      {status.home}")
    if not status.running:
        sys.exit(3)


@neo4j.command("logs")
@click.option("-l", "--lines", default=50, show_default=True, help="How many lines to show.")
@pass_context
@friendly_errors
def neo4j_logs(ctx: Context, lines: int) -> None:
    """Print the end of the local server's log."""
    from engramdb.platform.neo4j_server import LocalNeo4j

    click.echo(LocalNeo4j(ctx.settings()).log_tail(lines))


def _refuse_if_external(settings: Settings) -> None:
    if not settings.uses_local_neo4j:
        raise EngramError(
            f"an external Neo4j is configured ({settings.neo4j_uri}); engramdb does not manage its lifecycle"
        )


# ------------------------------------------------------------ init / stats
@main.command()
@pass_context
@friendly_errors
def init(ctx: Context) -> None:
    """Start services if needed and apply the schema (idempotent)."""
    from engramdb.platform.graph import apply_schema, connect
    from engramdb.platform.vectors import open_vector_store

    settings = ctx.settings()
    with err_console.status("Connecting to Neo4j..."):
        driver = connect(settings)
    try:
        count = apply_schema(driver, settings.neo4j_database)
    finally:
        driver.close()
    store = open_vector_store(settings)
    store.close()
    console.print(f"schema ready ({count} statements applied idempotently)")
    console.print(f"vectors: {'Qdrant server ' + settings.qdrant_url if settings.qdrant_url else settings.qdrant_path}")


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_context
@friendly_errors
def stats(ctx: Context, as_json: bool) -> None:
    """Counts of documents, chunks, entities, verb phrases and QA pairs in the namespace."""
    from engramdb.platform.memory import Memory

    with Memory(settings=ctx.settings()) as memory:
        data = memory.stats()
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    table = Table(title=f"engramdb memory — namespace {data['namespace']!r}")
    table.add_column("what")
    table.add_column("count", justify="right")
    for key, value in data.items():
        if key != "namespace":
            table.add_row(key.replace("_", " "), str(value))
    console.print(table)


# -------------------------------------------------------- ingest / delete
@main.command()
@click.argument("path")
@click.option("--batch-size", type=int, help="Documents per write transaction.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@pass_context
@friendly_errors
def ingest(ctx: Context, path: str, batch_size: int | None, as_json: bool) -> None:
    """Remember PATH: a .txt/.md file, a folder, a JSON corpus [{title, text}], or - for stdin."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from engramdb.ingestion.loaders import load_path
    from engramdb.platform.memory import Memory

    settings = ctx.settings()
    if batch_size is not None:
        settings = settings.model_copy(update={"ingest_batch_size": batch_size})
    documents = load_path(path)
    with Memory(settings=settings) as memory:
        with err_console.status("Loading models and connecting..."):
            memory.ingestor  # noqa: B018 - open stores and models before the bar starts
        columns = (TextColumn("ingest"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
        with Progress(*columns, console=err_console, transient=False) as bar:
            task = bar.add_task("ingest", total=len(documents))
            report = memory.ingest(documents, progress=lambda n: bar.advance(task, n))
    if as_json:
        from dataclasses import asdict

        click.echo(json.dumps(asdict(report), indent=2))
    else:
        console.print(
            f"{report.documents} documents: {report.ingested} ingested, {report.skipped} unchanged, "
            f"{report.failed} failed ({report.replaced} replaced) in {report.seconds:.1f} s; "
            f"{report.chunks} chunks, {report.verb_phrases} verb phrases, {report.qa_pairs} QA pairs"
        )
        for doc_id, error in report.failures[:20]:
            err_console.print(f"[yellow]failed[/] {doc_id}: {error}", highlight=False)
    if report.failed:
        sys.exit(2)


@main.command()
@click.argument("doc_ids", nargs=-1, required=True)
@pass_context
@friendly_errors
def delete(ctx: Context, doc_ids: tuple[str, ...]) -> None:
    """Forget documents by id, with their QA edges, vectors, caches and orphaned entities."""
    from engramdb.platform.memory import Memory

    with Memory(settings=ctx.settings()) as memory:
        for doc_id in doc_ids:
            report = memory.delete(doc_id)
            console.print(
                f"deleted {doc_id}: {report.deleted_entities} entities removed, "
                f"{report.surviving_entities} shared entities kept"
            )


# ------------------------------------------------------------------- ask
@main.command()
@click.argument("question")
@click.option("--trace", is_flag=True, help="Show each hop's candidates, kept and pruned beams.")
@click.option("--decomposition", "decomposition_json", help='Sub-questions as JSON: [["q1", "q2 <ENTITY_Q1>"]].')
@click.option("--json", "as_json", is_flag=True, help="Print the whole result as JSON.")
@pass_context
@friendly_errors
def ask(ctx: Context, question: str, trace: bool, decomposition_json: str | None, as_json: bool) -> None:
    """Answer QUESTION from memory (chain beam search over QA pairs)."""
    from engramdb.platform.errors import InputError
    from engramdb.platform.memory import Memory

    decomposition = None
    if decomposition_json:
        try:
            decomposition = json.loads(decomposition_json)
        except json.JSONDecodeError as exc:
            raise InputError(f"--decomposition is not valid JSON: {exc.msg}") from exc
    with Memory(settings=ctx.settings()) as memory:
        result = memory.ask(question, decomposition=decomposition, trace=trace)
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2, default=str))
        return
    from engramdb.retrieval.render import render_result

    render_result(console, result, trace=trace)


# ------------------------------------------------------------------- eval
@main.command("eval")
@click.argument("dataset", type=click.Path(path_type=Path))
@click.option("--corpus", type=click.Path(path_type=Path), help="Corpus to build memory from (default: the dataset's own paragraphs).")
@click.option("-s", "--strategy", "strategies", multiple=True, help="Strategy to run (repeatable; default chain, bm25, dense).")
@click.option("--limit", type=int, help="Only the first N questions.")
@click.option("--decomposition", type=click.Choice(["gold", "llm", "offline"]), help="Sub-questions for chain search (default: gold when the dataset has them).")
@click.option("--out", type=click.Path(path_type=Path), help="Output folder (default ./eval-results/<dataset>).")
@pass_context
@friendly_errors
def eval_command(ctx: Context, dataset: Path, corpus: Path | None, strategies: tuple[str, ...], limit: int | None,
                 decomposition: str | None, out: Path | None) -> None:  # fmt: skip
    """Evaluate strategies side by side on DATASET (MuSiQue format or [{question, answer}])."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from engramdb.ingestion.documents import make_document
    from engramdb.ingestion.loaders import load_path
    from engramdb.platform.errors import InputError
    from engramdb.platform.llm import make_chat_model
    from engramdb.platform.memory import Memory
    from engramdb.retrieval.eval_data import load_dataset
    from engramdb.retrieval.eval_report import markdown_table, write_report
    from engramdb.retrieval.evaluation import run_eval, summarize
    from engramdb.retrieval.strategies import EvalContext, make_strategy

    items = load_dataset(dataset)[:limit] if limit else load_dataset(dataset)
    if corpus is not None:
        documents = load_path(corpus)
    else:
        paragraphs = {(p["title"], p["text"]) for item in items for p in item.paragraphs if p["text"].strip()}
        if not paragraphs:
            raise InputError(f"{dataset} has no paragraphs: pass --corpus to build the memory from")
        documents = [make_document(text, title=title) for title, text in sorted(paragraphs)]
    settings = ctx.settings()
    if decomposition is None:
        decomposition = "gold" if all(i.gold_decomposition for i in items) else ("llm" if settings.llm else "offline")
    if decomposition == "llm" and not settings.llm:
        raise InputError("--decomposition llm needs an LLM: set ENGRAMDB_LLM (e.g. openai:gpt-4o-mini) and its key")
    names = list(strategies) or ["chain", "bm25", "dense"]
    out_dir = out or Path("eval-results") / dataset.stem
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Memory(settings=settings) as memory:
        with Progress(*columns, console=err_console) as bar:
            task = bar.add_task("build memory", total=len(documents))
            memory.ingest(documents, progress=lambda n: bar.advance(task, n))
        context = EvalContext(memory, decomposition, make_chat_model(settings))
        runners = [make_strategy(name, context) for name in names]
        with Progress(*columns, console=err_console) as bar:
            task = bar.add_task("evaluate", total=len(items))
            records = run_eval(runners, items, progress=lambda n: bar.advance(task, n))
        summary = summarize(records)
        meta = {"dataset": str(dataset), "corpus": str(corpus or "dataset paragraphs"), "passages": len(documents),
                "questions": len(items), "namespace": memory.namespace, "decomposition": decomposition,
                "llm": settings.llm or "none (offline)", "embedder": memory.embedder.name}  # fmt: skip
    paths = write_report(out_dir, meta, summary, records)
    console.print(markdown_table(summary), highlight=False)
    console.print(f"results: {paths['json']}, {paths['markdown']}, plots in {out_dir}")


# ---------------------------------------------------------- config/doctor
@main.group()
def config() -> None:
    """Inspect settings."""


@config.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_context
@friendly_errors
def config_show(ctx: Context, as_json: bool) -> None:
    """Show effective settings (secrets masked)."""
    data = ctx.settings().masked()
    if as_json:
        click.echo(json.dumps(data, indent=2, default=str))
        return
    for key, value in data.items():
        console.print(f"{key:24} {'' if value is None else value}", highlight=False)


@main.command()
@pass_context
@friendly_errors
def doctor(ctx: Context) -> None:
    """Check Java, Neo4j, Qdrant, models and API keys."""
    from engramdb.platform.doctor import run_checks

    checks = run_checks(ctx.settings())
    for check in checks:
        mark = "[green]ok[/]  " if check.ok else "[red]FAIL[/]"
        console.print(f"{mark} {check.name:24} {check.detail}", highlight=False)
    if not all(c.ok for c in checks):
        sys.exit(1)


if __name__ == "__main__":  # pragma: no cover
    main()

"""The ``engramdb`` command line (click).

Errors that engramdb raises on purpose print as one line, ``error: ...``, and
exit with status 1; so does a store that cannot be reached (Neo4j stopped
mid-ingest, a Qdrant server down), and so does a text argument that is not
valid UTF-8 (checked where click reads it, by :class:`UserText`). Anything else
is a bug and keeps its traceback. Text that comes from the user (ids, paths,
titles, error messages quoting them) is always escaped before it reaches rich,
whose markup would otherwise eat ``[bold]`` or crash on ``[/]``; and every
string the consoles print has its control characters made visible
(:class:`CliConsole`), so stored text cannot drive the reader's terminal.
A closed output pipe (``engramdb documents | head -1``) ends the program
quietly with status 141, as SIGPIPE would end other Unix tools.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NoReturn, TypeVar

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from engramdb.platform.config import Settings
from engramdb.platform.errors import EngramError, InputError, Store, unreachable_store
from engramdb.platform.text_safety import require_unicode, visible

if TYPE_CHECKING:
    from engramdb.ingestion.pipeline import IngestReport
    from engramdb.platform.interfaces.memory import Memory

STRATEGY_HELP = (
    "Ask strategy: chain, bm25, dense, diffusion, hypergraph, cluster (see `engramdb config show`)."
)
SET_HELP = "Override one of the strategy's settings for this call, e.g. --set beam_width=8 (repeatable)."
F = TypeVar("F", bound=Callable[..., Any])
#: Exit status when the reader of stdout went away (128 + SIGPIPE), as for other Unix tools.
EXIT_CLOSED_PIPE = 141


def _closed_pipe(stream: IO[str] | None = None) -> NoReturn:
    """End quietly after a write to a closed pipe (the Python docs' recipe for SIGPIPE).

    The stream is pointed at /dev/null first, so the flush at interpreter exit does not fail
    again and print "Exception ignored ... BrokenPipeError"; there is no message, since the
    reader that would see it is gone.
    """
    target = stream if stream is not None else sys.stdout
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, target.fileno())
        finally:
            os.close(devnull)
    except (OSError, ValueError):  # no file descriptor (a test runner's buffer): nothing to redirect
        pass
    raise SystemExit(EXIT_CLOSED_PIPE)


@contextmanager
def exit_quietly_on_closed_pipe() -> Iterator[None]:
    """Turn a BrokenPipeError from the block, or from flushing stdout after it, into :func:`_closed_pipe`.

    Flushing here matters: output still buffered when the command returns would otherwise
    hit the closed pipe at interpreter exit, outside any handler.
    """
    try:
        try:
            yield
        finally:
            if sys.stdout is not None:
                sys.stdout.flush()
    except BrokenPipeError:
        _closed_pipe()


class CliConsole(Console):
    """The CLI's consoles: strings are printed with control characters made visible, and a
    closed pipe ends the program quietly with status 141 (rich's own default exits 1).

    Visible, because stored text (a title holding ``ESC ]0;... BEL``) reaches the screen
    through many messages, tables and other modules' trace renderers; doing it here covers
    every string they print. Table cells are built from text before rich sees it, so the
    tables apply :func:`visible` to their cells themselves.
    """

    def print(self, *objects: Any, **kwargs: Any) -> None:
        super().print(*(visible(o) if isinstance(o, str) else o for o in objects), **kwargs)

    def rule(self, title: Any = "", **kwargs: Any) -> None:
        super().rule(visible(title) if isinstance(title, str) else title, **kwargs)

    def on_broken_pipe(self) -> None:
        self.quiet = True
        _closed_pipe(sys.stderr if self.stderr else sys.stdout)


# Soft wrap: a long path or id stays one line (the terminal folds it), so it can be copied whole.
console = CliConsole(soft_wrap=True)
err_console = CliConsole(stderr=True, soft_wrap=True)
#: Commands that write memory: after a lost store, running them again resumes the work.
RESUMABLE_COMMANDS = {"ingest": "rerun the ingest to resume where it stopped", "eval": "rerun eval to resume"}
#: The failure reason column of `engramdb documents` (the JSON output keeps it whole).
REASON_WIDTH = 60
TITLE_WIDTH = 40
#: Other namespaces named in the "this namespace is empty" hint.
NAMESPACES_SHOWN = 8


def friendly_errors(func: F) -> F:
    """Turn EngramError, bad settings and unreachable stores into a one-line message and exit code 1."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from pydantic import ValidationError

        try:
            return func(*args, **kwargs)
        except EngramError as exc:
            store = unreachable_store(exc)
            _fail(unreachable_message(store, exc) if store else str(exc))
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            _fail(f"invalid settings: {problems}")
        except Exception as exc:
            store = unreachable_store(exc)
            if store is None:
                raise
            _fail(unreachable_message(store, exc))

    return wrapper  # type: ignore[return-value]


def _fail(message: str) -> NoReturn:
    print_error(message)
    sys.exit(1)


def print_error(message: str) -> None:
    """The one ``error:`` line on stderr (markup escaped, control characters made visible)."""
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False)


class CliInputError(click.ClickException):
    """Bad input found while click reads the arguments (before a command's own error handling):
    printed as the same one ``error:`` line, exit status 1, rather than click's usage block."""

    exit_code = 1

    def show(self, file: IO[Any] | None = None) -> None:
        print_error(self.message)


class UserText(click.ParamType):
    """A text argument or option value: refused in one ``error:`` line unless valid UTF-8.

    Python hands undecodable argv bytes over as lone surrogates; left in, they fail much
    later with a traceback (the driver, the tokenizer, the terminal cannot encode them).
    Paths are not text in this sense (any bytes name a file), so they keep click's types.
    ``what`` names the value in the message, e.g. ``"the question"``.
    """

    name = "text"

    def __init__(self, what: str) -> None:
        self.what = what

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        text = click.STRING.convert(value, param, ctx)
        try:
            return require_unicode(text, self.what)
        except InputError as exc:
            raise CliInputError(str(exc)) from exc


class TokenBudgets(click.ParamType):
    """``128,256,512``: evidence-token budgets, each a whole number of at least 16."""

    name = "budgets"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, tuple):
            return value
        parts = [p.strip() for p in str(value).split(",") if p.strip()]
        try:
            budgets = tuple(int(p) for p in parts)
        except ValueError:
            self.fail(f"{value!r} is not a comma-separated list of whole numbers", param, ctx)
        if not budgets or any(b < 16 or b > 100_000 for b in budgets):
            self.fail(f"{value!r}: each budget must be between 16 and 100000 tokens", param, ctx)
        return tuple(dict.fromkeys(budgets))


def read_stdin_text(what: str) -> str:
    """Standard input as text, decoded strictly as UTF-8 so invalid bytes are one clear error."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        return require_unicode(sys.stdin.read(), what)
    data = stream.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{what} is not valid UTF-8 (byte 0x{data[exc.start]:02x} at position {exc.start})"
        ) from exc


def unreachable_message(store: Store, exc: BaseException) -> str:
    """One line for a lost store: which one, where, why (when the OS said), what to do next."""
    settings = _current_settings()
    reason = _os_reason(exc)
    because = f" ({reason})" if reason else ""
    if store == "neo4j":
        if settings is None or settings.neo4j_uri:
            where = settings.neo4j_uri if settings else "the configured URI"
            message = (
                f"Neo4j at {where} is not reachable{because}; is the server up and ENGRAMDB_NEO4J_URI right?"
            )
        else:
            from engramdb.platform.neo4j_server import LocalNeo4j

            where = LocalNeo4j(settings).bolt_uri
            message = (f"Neo4j at {where} is not reachable{because}; is it running? "
                       "Check with `engramdb neo4j status`")  # fmt: skip
    else:
        where = (settings.qdrant_url if settings else None) or "the configured URL"
        message = (
            f"Qdrant at {where} is not reachable{because}; is the server up and ENGRAMDB_QDRANT_URL right?"
        )
    command = click.get_current_context(silent=True)
    resume = RESUMABLE_COMMANDS.get(command.info_name or "") if command else None
    return f"{message}; {resume}" if resume else message


def _current_settings() -> Settings | None:
    """The invocation's settings, for naming where a store was expected (None outside a command)."""
    ctx = click.get_current_context(silent=True)
    holder = ctx.find_object(Context) if ctx else None
    try:
        return holder.settings() if holder else Settings()
    except Exception:  # noqa: BLE001 - only used to word an error that is already being reported
        return None


def _os_reason(exc: BaseException) -> str | None:
    """The operating system's word for a failed connection ("Connection refused"), if any in the chain."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.strerror:
            return current.strerror
        current = current.__cause__ or current.__context__
    return None


class _DriverRetryNotice(logging.Handler):
    """Stands in for the Neo4j driver's log output in the CLI.

    When the server goes away, the driver logs each retry of the transaction
    (and each defunct connection) as a warning, which Python prints raw to
    stderr. One plain notice that it is retrying says the same; the final
    failure is reported by :func:`friendly_errors`.
    """

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.told = False

    def emit(self, record: logging.LogRecord) -> None:
        if not self.told and "retried" in record.getMessage():
            self.told = True
            err_console.print("[yellow]warning:[/] lost the connection to Neo4j; retrying", highlight=False)


def quiet_driver_logs() -> None:
    """Route the ``neo4j`` logger to one :class:`_DriverRetryNotice` (idempotent)."""
    logger = logging.getLogger("neo4j")
    notices = [h for h in logger.handlers if isinstance(h, _DriverRetryNotice)]
    for handler in notices:
        handler.told = False
    if not notices:
        logger.addHandler(_DriverRetryNotice())
    logger.propagate = False


class SdkNotices(logging.Handler):
    """Shows the ``engramdb`` logger's records a command-line user must see, on stderr.

    The SDK only logs (an application decides where its logs go); the CLI has no logging
    set up, so without this a side effect that outlives the command, such as starting the
    local Neo4j, would pass unannounced. A record marked as a notice (see
    ``engramdb.platform.graph.NOTICE``) prints as one ``note:`` line; warnings print as one
    ``warning:`` line (they used to reach stderr through Python's last-resort handler, which
    a handler here replaces); other INFO records stay quiet.
    """

    def __init__(self) -> None:
        super().__init__(logging.INFO)

    def emit(self, record: logging.LogRecord) -> None:
        from engramdb.platform.graph import NOTICE

        if getattr(record, NOTICE, False):
            err_console.print(f"[yellow]note:[/] {escape(record.getMessage())}", highlight=False)
        elif record.levelno >= logging.WARNING:
            err_console.print(f"[yellow]warning:[/] {escape(record.getMessage())}", highlight=False)


def show_sdk_notices() -> None:
    """Attach one :class:`SdkNotices` to the ``engramdb`` logger and let its INFO records through
    (idempotent: the CLI's group callback runs once per invocation, tests invoke it many times)."""
    logger = logging.getLogger("engramdb")
    if not any(isinstance(h, SdkNotices) for h in logger.handlers):
        logger.addHandler(SdkNotices())
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)


class Context:
    """Settings built once per invocation from options, environment and TOML.

    ``--home`` and ``-n`` may come before the subcommand (group options) or
    after it (the same options on the subcommand); the later one wins.
    """

    def __init__(self, home: Path | None = None, namespace: str | None = None) -> None:
        self.overrides: dict[str, Any] = {}
        self.server_url: str | None = None  # --server: go through this engramdb server
        if home is not None:
            self.overrides["home"] = home
        if namespace is not None:
            self.overrides["namespace"] = namespace

    def settings(self) -> Settings:
        return Settings(**self.overrides)

    def remote(self) -> Any:
        """A client of the server this invocation goes through, or None to open the stores here.

        ``--server URL`` or ``$ENGRAMDB_SERVER_URL`` name one; otherwise a server running for the
        data home (``engramdb serve`` records itself there) is used by itself, because it holds
        the embedded store this process could not open."""
        from engramdb.platform.interfaces.server_discovery import find_server

        settings = self.settings()
        found = find_server(settings.home, self.server_url)
        if found is None:
            return None
        from engramdb.platform.interfaces.client import connect

        return connect(found.url, found.token, settings.namespace)


pass_context = click.make_pass_decorator(Context, ensure=True)
HOME_HELP = "Data home (default: per-user data dir)."
NAMESPACE_HELP = "Memory namespace (default: 'default')."


def _override(setting: str) -> Callable[[click.Context, click.Parameter, Any], None]:
    """An option callback that writes a subcommand's value over the group's."""

    def store(ctx: click.Context, _param: click.Parameter, value: Any) -> None:
        if value is not None:
            ctx.ensure_object(Context).overrides[setting] = value

    return store


def home_option(func: F) -> F:
    """``--home DIR`` on a subcommand (it is also accepted before the subcommand)."""
    option = click.option("--home", type=click.Path(path_type=Path), expose_value=False,
                          callback=_override("home"), help=HOME_HELP)  # fmt: skip
    return option(func)  # type: ignore[return-value]


NAMESPACE_TEXT = UserText("the namespace (-n)")


def _server_url(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value is not None:
        ctx.ensure_object(Context).server_url = value


SERVER_HELP = ("Go through the engramdb server at URL (default: $ENGRAMDB_SERVER_URL, else the server "
               "running for the data home, else open the memory here).")  # fmt: skip


def server_option(func: F) -> F:
    """``--server URL`` on a command that can go through a running ``engramdb serve``."""
    option = click.option("--server", metavar="URL", type=UserText("--server"), expose_value=False,
                          callback=_server_url, help=SERVER_HELP)  # fmt: skip
    return option(func)  # type: ignore[return-value]


def memory_options(func: F) -> F:
    """``--home`` and ``-n/--namespace`` on a subcommand that works on a namespace."""
    option = click.option("-n", "--namespace", type=NAMESPACE_TEXT, expose_value=False,
                          callback=_override("namespace"), help=NAMESPACE_HELP)  # fmt: skip
    return home_option(option(func))  # type: ignore[return-value]


class EngramGroup(click.Group):
    """The top-level group: every command runs under :func:`exit_quietly_on_closed_pipe`.

    Overriding these two methods, not ``main``, because click's ``main`` catches a broken
    pipe itself and exits 1; ``make_context`` covers ``--help`` and ``--version`` output,
    ``invoke`` the commands. The entry point (``engramdb.platform.interfaces.cli:main``) is unchanged.
    """

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        with exit_quietly_on_closed_pipe():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        with exit_quietly_on_closed_pipe():
            return super().invoke(ctx)


@click.group(cls=EngramGroup)
@click.option("--home", type=click.Path(path_type=Path), help=HOME_HELP)
@click.option("-n", "--namespace", type=NAMESPACE_TEXT, help=NAMESPACE_HELP)
@click.option("--server", "server_url", metavar="URL", type=UserText("--server"), help=SERVER_HELP)
@click.version_option(package_name="engramdb")
@click.pass_context
def main(ctx: click.Context, home: Path | None, namespace: str | None, server_url: str | None) -> None:
    """engramdb: structured memory for LLMs (Neo4j + Qdrant).

    While `engramdb serve` runs for the data home, ask, stats, documents, delete, ingest and mcp go
    through it (it holds the memory); --server URL or ENGRAMDB_SERVER_URL name a server explicitly.
    """
    ctx.obj = Context(home, namespace)
    ctx.obj.server_url = server_url
    quiet_driver_logs()
    show_sdk_notices()


# ----------------------------------------------------------------- neo4j
@main.group()
def neo4j() -> None:
    """Manage the local Neo4j 5.26 server."""


@neo4j.command("install")
@home_option
@pass_context
@friendly_errors
def neo4j_install(ctx: Context) -> None:
    """Fetch the Neo4j server, Bolt and Browser jars from Maven Central (once)."""
    from engramdb.platform.neo4j_server import LocalNeo4j

    server = LocalNeo4j(ctx.settings())
    if server.is_installed():
        console.print(f"Neo4j jars already in {escape(str(server.lib))}")
        return
    with err_console.status("Fetching Neo4j jars from Maven Central..."):
        server.install()
    console.print(f"Neo4j jars installed in {escape(str(server.lib))}")


@neo4j.command("start")
@home_option
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
    console.print(
        f"  Bolt:    {escape(status.bolt_uri)}  (user neo4j, password in {escape(str(server.password_file))})"
    )
    console.print(f"  Browser: {escape(status.browser_url)}")


@neo4j.command("stop")
@home_option
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
@home_option
@pass_context
@friendly_errors
def neo4j_status(ctx: Context) -> None:
    """Show whether the local server is installed and running."""
    from engramdb.platform.neo4j_server import LocalNeo4j

    settings = ctx.settings()
    if not settings.uses_local_neo4j:
        console.print(
            f"external Neo4j configured: {escape(str(settings.neo4j_uri))} (no local server is used)"
        )
        return
    status = LocalNeo4j(settings).status()
    console.print(f"installed: {'yes' if status.installed else 'no'}")
    running = f"yes (pid {status.pid})" if status.running else "no"
    console.print(f"running:   {running}")
    console.print(f"bolt:      {escape(status.bolt_uri)}")
    console.print(f"browser:   {escape(status.browser_url)}")
    console.print(f"home:      {escape(str(status.home))}")
    if not status.running:
        sys.exit(3)


@neo4j.command("logs")
@click.option("-l", "--lines", default=50, show_default=True, help="How many lines to show.")
@home_option
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


# ------------------------------------------------------ init / stats / documents
@main.command()
@home_option
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
    where = f"Qdrant server {settings.qdrant_url}" if settings.qdrant_url else str(settings.qdrant_path)
    console.print(f"vectors: {escape(where)}")


#: How `engramdb stats` groups Memory.stats(): (group, {key: label}); keys not listed show under "other".
STATS_LAYOUT: tuple[tuple[str, dict[str, str]], ...] = (
    ("nodes", {"documents": "documents", "chunks": "chunks", "entities": "entities",
               "verb_phrases": "verb phrases", "gists": "gists", "memory_points": "memory points",
               "clusters": "clusters"}),
    ("edges", {"has_chunk_edges": "HAS_CHUNK", "mentions_edges": "MENTIONS",
               "has_verb_phrase_edges": "HAS_VERB_PHRASE", "role_in_edges": "ROLE_IN", "qa_edges": "QA",
               "qa_pairs": "QA pairs (distinct questions)"}),
    ("vectors", {"qa_vectors": "QA pairs", "chunk_vectors": "passages", "entity_vectors": "entity names"}),
    ("documents", {"documents_done": "done", "documents_pending": "pending", "documents_failed": "failed"}),
)  # fmt: skip


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@memory_options
@server_option
@pass_context
@friendly_errors
def stats(ctx: Context, as_json: bool) -> None:
    """Node, edge and vector counts of the namespace, and its documents by status."""
    from engramdb.platform.interfaces.memory import Memory

    remote = ctx.remote()
    if remote is not None:
        with remote:
            data = remote.stats()
        empty_hint = f"namespace {remote.namespace!r} holds no documents" if data["documents"] == 0 else None
    else:
        with Memory(settings=ctx.settings()) as memory:
            data = memory.stats()
            empty_hint = empty_namespace_hint(memory) if data["documents"] == 0 and not as_json else None
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    console.print(stats_table(data))
    if empty_hint:
        err_console.print(f"[yellow]note:[/] {escape(empty_hint)}", highlight=False)
    for status, advice in (("failed", "shows why"), ("pending", "lists them (an interrupted ingest)")):
        if data.get(f"documents_{status}"):
            err_console.print(f"[yellow]note:[/] {data[f'documents_{status}']} documents {status}: "
                              f"`engramdb documents --status {status}` {advice}; rerun the ingest to finish them",
                              highlight=False)  # fmt: skip


def stats_table(data: dict[str, Any]) -> Table:
    """Memory.stats() as a table grouped into nodes, edges, vectors and documents by status."""
    table = Table(title=f"engramdb memory — namespace {escape(repr(data['namespace']))}")
    table.add_column("")
    table.add_column("what")
    table.add_column("count", justify="right")
    listed: set[str] = {"namespace"}
    groups = [(group, [(label, data[key]) for key, label in labels.items() if key in data])
              for group, labels in STATS_LAYOUT]  # fmt: skip
    for _, labels in STATS_LAYOUT:
        listed.update(labels)
    groups.append(
        ("other", [(key.replace("_", " "), value) for key, value in data.items() if key not in listed])
    )
    for group, rows in groups:
        if not rows:
            continue
        if table.row_count:
            table.add_section()
        for i, (label, value) in enumerate(rows):
            table.add_row(group if i == 0 else "", Text(visible(label)), str(value))
    return table


@main.command()
@click.option(
    "--status", type=click.Choice(["done", "pending", "failed"]), help="Only documents with this status."
)
@click.option("--limit", type=click.IntRange(min=0), help="At most N documents (ordered by id).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (failure reasons in full).")
@memory_options
@server_option
@pass_context
@friendly_errors
def documents(ctx: Context, status: str | None, limit: int | None, as_json: bool) -> None:
    """List the namespace's documents: id, title, status, chunks, QA pairs, why ingest failed."""
    from engramdb.platform.interfaces.memory import Memory

    remote = ctx.remote()
    if remote is not None:
        with remote:
            rows = remote.documents(status=status, limit=limit)
            data = remote.stats()
        counts = {s: data[f"documents_{s}"] for s in ("done", "pending", "failed") if data[f"documents_{s}"]}
        empty_hint = f"namespace {remote.namespace!r} holds no documents" if not counts else None
        namespace = remote.namespace
    else:
        with Memory(settings=ctx.settings()) as memory:
            rows = memory.documents(status=status, limit=limit)
            counts = memory.document_counts()
            empty_hint = empty_namespace_hint(memory) if not counts and not as_json else None
        namespace = memory.namespace
    if as_json:
        click.echo(json.dumps(rows, indent=2, default=str))
        return
    if empty_hint:
        err_console.print(f"[yellow]note:[/] {escape(empty_hint)}", highlight=False)
        return
    total = counts.get(status, 0) if status else sum(counts.values())
    if not rows:
        which = f"{status} documents" if status else "documents"
        console.print(f"no {which} in namespace {escape(repr(namespace))}")
        return
    console.print(documents_table(rows, namespace))
    if len(rows) < total:
        console.print(f"{len(rows)} of {total} documents shown (--limit)")


def documents_table(rows: list[dict[str, Any]], namespace: str) -> Table:
    """Documents as a table; titles, ids and reasons are shown literally (never as markup).

    Titles and reasons are cut here, not by rich: a no-wrap column claims its whole
    width, and rich would then squeeze the id column away in a narrow terminal. Every
    column folds instead, so an id is never cut (it is what `delete` needs).
    """
    table = Table(title=f"documents — namespace {escape(repr(namespace))}")
    for name in ("id", "title", "status", "chunks", "QA pairs", "failure reason"):
        table.add_column(name, overflow="fold", justify="right" if name in ("chunks", "QA pairs") else "left")
    styles = {"done": "green", "pending": "yellow", "failed": "red"}
    for row in rows:
        table.add_row(
            Text(visible(row["id"])), Text(shorten(row["title"] or "", TITLE_WIDTH)),
            Text(str(row["status"]), style=styles.get(row["status"], "")),
            _count(row["chunks"]), _count(row["qa_pairs"]), Text(shorten(row["error"] or "", REASON_WIDTH)),
        )  # fmt: skip
    return table


def _count(value: int | None) -> str:
    return "—" if value is None else str(value)


def shorten(text: str, width: int) -> str:
    """``text`` on one line, control characters made visible, cut to ``width`` characters with an ellipsis."""
    flat = " ".join(visible(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def empty_namespace_hint(memory: Memory) -> str:
    """Why an empty namespace answers nothing, and which namespaces do hold documents."""
    others = memory.other_namespaces()
    head = f"namespace {memory.namespace!r} holds no documents"
    if not others:
        return f"{head}, and no other namespace does either: add some with `engramdb ingest PATH`"
    shown = ", ".join(f"{name} ({count})" for name, count in list(others.items())[:NAMESPACES_SHOWN])
    more = f" and {len(others) - NAMESPACES_SHOWN} more" if len(others) > NAMESPACES_SHOWN else ""
    return f"{head}; namespaces with documents: {shown}{more} (choose one with -n NAME)"


# -------------------------------------------------------- ingest / delete
@main.command()
@click.argument("path")
@click.option("--batch-size", type=int, help="Documents per write transaction.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--strict", is_flag=True, help="Ingest nothing when any file of a folder cannot be read.")
@click.option("--as-text", is_flag=True, help="Read files of any type as plain UTF-8 text.")
@click.option("--title", help="Title of the one document read from - (stdin) or a file.")
@click.option("--id", "doc_id", help="Id of the one document read from - (stdin) or a file.")
@memory_options
@server_option
@pass_context
@friendly_errors
def ingest(ctx: Context, path: str, batch_size: int | None, as_json: bool, strict: bool, as_text: bool,
           title: str | None, doc_id: str | None) -> None:  # fmt: skip
    """Remember PATH: a file (.txt .md .json .pdf .html .docx .pptx), a folder, or - for stdin.

    In a folder every readable file is ingested: a file that cannot be read is
    recorded as a failed document with its reason (exit 2), a file of another
    type is listed as skipped. A JSON file is a corpus [{title, text}].
    """
    from engramdb.ingestion.loaders import scan_path

    settings = ctx.settings()
    if batch_size is not None:
        settings = settings.model_copy(update={"ingest_batch_size": batch_size})
    with err_console.status("Reading files..."):
        loaded = scan_path(path, as_text=as_text, title=title, doc_id=doc_id)
    if strict:
        loaded.raise_problems()  # before any store is touched: nothing is written
    remote = ctx.remote()
    if remote is not None:
        report = _ingest_through(remote, loaded)
    else:
        report = _ingest_here(settings, loaded)
    if as_json:
        from dataclasses import asdict

        click.echo(json.dumps(asdict(report), indent=2))
    else:
        print_ingest_summary(report)
    if report.failed:
        sys.exit(2)


def _ingest_through(remote: Any, loaded: Any) -> IngestReport:
    """Send what was read to the server (this process reads the files; the server never does) and wait
    for its jobs; files that could not be read are reported here (the server never saw them)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    columns = (TextColumn("{task.description:>9}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with remote, Progress(*columns, console=err_console, transient=False) as bar:
        task = bar.add_task("documents", total=len(loaded.documents))
        err_console.print(f"note: ingesting through the engramdb server at {remote.url}", highlight=False,
                          markup=False)  # fmt: skip
        report = (
            remote.ingest(loaded.documents, progress=lambda n: bar.advance(task, n))
            if loaded.documents
            else None
        )
    from engramdb.ingestion.pipeline import IngestReport

    report = report or IngestReport()
    for problem in loaded.failed:
        report.documents += 1
        report.failed += 1
        report.failures.append((problem.doc_id or problem.path, f"{problem.path}: {problem.reason}"))
    report.skipped_files.extend((f.path, f.reason) for f in loaded.skipped)
    return report


def _ingest_here(settings: Settings, loaded: Any) -> IngestReport:
    """Ingest in this process, which opens the stores, with a documents row and a chunks row."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from engramdb.ingestion.pipeline import PartProgress
    from engramdb.platform.interfaces.memory import Memory

    with Memory(settings=settings) as memory:
        with err_console.status("Loading models and connecting..."):
            memory.ingestor  # noqa: B018 - open stores and models before the bar starts
        label = TextColumn("{task.description:>9}")
        columns = (label, BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
        with Progress(*columns, console=err_console, transient=False) as bar:
            task = bar.add_task("documents", total=len(loaded.documents) + len(loaded.failed))
            # A long document is one batch of many parts: the chunk row moves while the document row waits.
            chunk_task = bar.add_task("chunks", total=None, visible=False)

            def on_part(part: PartProgress) -> None:
                bar.update(chunk_task, total=part.chunks_total, completed=part.chunks_done, visible=True)

            report = memory.ingest(loaded, progress=lambda n: bar.advance(task, n), on_part=on_part)
    return report


#: Failed and skipped files named one by one up to these counts; past them, counts by reason follow.
FAILED_NAMED = 50
SKIPPED_NAMED = 20


def print_ingest_summary(report: IngestReport) -> None:
    """One line of counts on stdout; every failed and skipped file (or, when many, counts by reason)
    and every note on stderr."""
    n_skipped = len(report.skipped_files)
    skipped = f", {n_skipped} file{'s' if n_skipped != 1 else ''} skipped" if n_skipped else ""
    console.print(
        f"{report.documents} documents: {report.ingested} ingested, {report.skipped} unchanged, "
        f"{report.failed} failed ({report.replaced} replaced){skipped} in {report.seconds:.1f} s; "
        f"{report.chunks} chunks, {report.verb_phrases} verb phrases, {report.qa_pairs} QA pairs"
    )
    for word, items, named in (("failed", [e for _, e in report.failures], FAILED_NAMED),
                               ("skipped", [f"{p}: {r}" for p, r in report.skipped_files], SKIPPED_NAMED)):  # fmt: skip
        for line in items[:named]:
            err_console.print(f"[yellow]{word}[/] {escape(line)}", highlight=False)
        if len(items) > named:
            counts = Counter(_reason_kind(line) for line in items)
            by_reason = "; ".join(f"{n} {escape(kind)}" for kind, n in counts.most_common())
            err_console.print(
                f"[yellow]{word}[/] {len(items)} in all, by reason: {by_reason}", highlight=False
            )
    if len(report.failures) > FAILED_NAMED:
        err_console.print("`engramdb documents --status failed` lists every failed document", highlight=False)
    for note in report.notes:
        err_console.print(f"[yellow]note:[/] {escape(note)}", highlight=False)


def _reason_kind(line: str) -> str:
    """A failure's reason without its file and particulars, for counting like with like."""
    reason = line.split(": ", 1)[-1]
    return re.sub(r"\d+", "N", re.sub(r"\s*\(.*", "", reason)).strip()


@main.command()
@click.argument("doc_ids", nargs=-1, required=True, type=UserText("a document id"))
@memory_options
@server_option
@pass_context
@friendly_errors
def delete(ctx: Context, doc_ids: tuple[str, ...]) -> None:
    """Forget documents by id, with their QA edges, vectors, caches and orphaned entities.

    All or none: if any id is unknown, nothing is deleted and every unknown id is named.
    """
    from engramdb.ingestion.pipeline import slowest_first
    from engramdb.platform.interfaces.memory import Memory

    remote = ctx.remote()
    if remote is not None:
        with remote:
            reports = remote.delete_many(doc_ids)
    else:
        with Memory(settings=ctx.settings()) as memory:
            reports = memory.delete_many(doc_ids)
    for report in reports:
        # the steps overlap (vectors beside the stages): the wall time is the report's own; a server
        # from before it sent steps that ran one after another, and one from before those, nothing
        wall = report.seconds if report.seconds is not None else sum(report.step_seconds.values())
        took = f" in {wall:.1f} s ({slowest_first(report.step_seconds)})" if report.step_seconds else ""
        console.print(
            f"deleted {escape(report.doc_id)}: {report.deleted_entities} entities removed, "
            f"{report.surviving_entities} shared entities kept{took}",
            highlight=False,
        )


# ------------------------------------------------------------------- ask
@main.command()
@click.argument("question", type=UserText("the question"))
@click.option("--trace", is_flag=True, help="Show each hop's candidates, kept and pruned beams.")
@click.option("--decomposition", "decomposition_json", type=UserText("--decomposition"),
              help='Sub-questions as JSON: [["q1", "q2 <ENTITY_Q1>"]].')  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the whole result as JSON.")
@click.option("-s", "--strategy", default="chain", show_default=True, type=UserText("--strategy"),
              help=STRATEGY_HELP)  # fmt: skip
@click.option("--set", "assignments", multiple=True, metavar="KEY=VALUE", type=UserText("a --set value"),
              help=SET_HELP)  # fmt: skip
@click.option("--budget", type=click.IntRange(16, 100_000), metavar="TOKENS",
              help="Evidence tokens at most (whole sentences); default: the strategy's recipe.")  # fmt: skip
@memory_options
@server_option
@pass_context
@friendly_errors
def ask(ctx: Context, question: str, trace: bool, decomposition_json: str | None, as_json: bool, strategy: str,
        assignments: tuple[str, ...], budget: int | None) -> None:  # fmt: skip
    """Answer QUESTION from memory with a strategy (default: chain beam search over QA pairs).

    An empty namespace is an error (exit 1) that names the namespaces holding documents.
    """
    from engramdb.platform.errors import InputError
    from engramdb.platform.interfaces.memory import Memory

    decomposition = None
    if decomposition_json:
        try:
            decomposition = json.loads(decomposition_json)
        except json.JSONDecodeError as exc:
            raise InputError(f"--decomposition is not valid JSON: {exc.msg}") from exc
    from engramdb.retrieval.strategy import parse_assignments

    options = parse_assignments(assignments)
    if budget is not None:
        options["budget"] = budget
    remote = ctx.remote()
    if remote is not None:
        with remote:
            try:
                result = remote.ask(question, strategy=strategy, decomposition=decomposition, trace=trace,
                                    **options)  # fmt: skip
            except InputError as exc:
                if getattr(exc, "code", None) == "empty_namespace":
                    raise InputError(f"namespace {remote.namespace!r} holds no documents: add some with "
                                     "`engramdb ingest PATH`") from exc  # fmt: skip
                raise
    else:
        with Memory(settings=ctx.settings()) as memory:
            if not memory.document_counts():
                raise InputError(empty_namespace_hint(memory))
            result = memory.ask(
                question, strategy=strategy, decomposition=decomposition, trace=trace, **options
            )
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2, default=str))
        return
    from engramdb.retrieval.render import render_result

    render_result(console, result, trace=trace)


def _per_strategy(values: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``{"chain.beam_width": 8}`` into ``{"chain": {"beam_width": 8}}``."""
    from engramdb.platform.errors import InputError

    out: dict[str, dict[str, Any]] = {}
    for key, value in values.items():
        name, sep, knob = key.partition(".")
        if not sep or not knob:
            raise InputError(f"eval --set takes STRATEGY.KEY=VALUE, got {key!r}")
        out.setdefault(name, {})[knob] = value
    return out


# ------------------------------------------------------------------ index
@main.command()
@click.argument("stages", nargs=-1, type=UserText("a stage name"))
@click.option("--json", "as_json", is_flag=True, help="Print the reports as JSON.")
@memory_options
@pass_context
@friendly_errors
def index(ctx: Context, stages: tuple[str, ...], as_json: bool) -> None:
    """Bring the namespace's memory up to date for STAGES (default: every stage), without re-extracting."""
    from dataclasses import asdict

    from engramdb.platform.interfaces.memory import Memory

    with Memory(settings=ctx.settings()) as memory:
        names = list(stages) or memory.stage_names
        with err_console.status("Indexing...") as status:
            reports = memory.index(names, progress=lambda s, n: status.update(f"Indexing {s}: +{n} chunks"))
    if as_json:
        click.echo(json.dumps([asdict(r) for r in reports], indent=2, default=str))
        return
    for report in reports:
        written = ", ".join(f"{v} {k}" for k, v in report.written.items()) or "nothing new"
        console.print(
            f"{report.stage}: {report.chunks} chunks indexed ({written})", highlight=False, markup=False
        )
        for chunk_id, why in report.failures[:20]:
            err_console.print(f"failed {chunk_id}: {why}", highlight=False, markup=False)
    if not reports:
        console.print("no memory stages are configured")


# ----------------------------------------------------------------- memory
@main.group("memory")
def memory_group() -> None:
    """Inspect kept working memory (hypergraph runs kept with --set keep_memory=true)."""


@memory_group.command("show")
@click.argument("query_id", type=UserText("the query id"))
@memory_options
@pass_context
@friendly_errors
def memory_show(ctx: Context, query_id: str) -> None:
    """Replay a kept hypergraph run: its steps in order, with each memory point's operation."""
    from engramdb.platform.interfaces.memory import Memory
    from engramdb.retrieval.hypergraph.strategy import load_memory_run, render_memory_run

    with Memory(settings=ctx.settings()) as memory:
        rows = load_memory_run(memory.graph, query_id)
    render_memory_run(console, rows)


# ---------------------------------------------------------- cypher / browser
@main.command("cypher")
@click.argument("query", required=False, type=UserText("the query"))
@click.option("-e", "--example", "example_name", metavar="NAME", type=UserText("--example"),
              help="Run a catalogued query (see --list).")  # fmt: skip
@click.option(
    "--list", "list_examples", is_flag=True, help="List the catalogued queries and their parameters."
)
@click.option("-p", "--param", "assignments", multiple=True, metavar="NAME=VALUE",
              type=UserText("a --param value"),
              help="A query parameter, JSON-ish (12, 0.5, true, [1,2], '\"text\"'); repeatable. "
                   "$namespace is always the -n namespace.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON.")
@click.option("--limit", type=int, help="At most this many rows (default: the analyst_row_limit setting).")
@click.option("--timeout", type=float, help="Seconds before the server stops the query (default: analyst_timeout; "
              "at most cypher_max_timeout).")  # fmt: skip
@memory_options
@pass_context
@friendly_errors
def cypher_command(ctx: Context, query: str | None, example_name: str | None, list_examples: bool,
                   assignments: tuple[str, ...], as_json: bool, limit: int | None,
                   timeout: float | None) -> None:  # fmt: skip
    """Run a read-only Cypher QUERY (or - for stdin) on the namespace's memory, or a catalogued --example.

    Writes, schema and admin commands, CALL dbms… and LOAD CSV are refused and nothing changes;
    the server stops a query at the timeout. Parameters are passed as parameters, never spliced.
    """
    from engramdb.platform.errors import InputError
    from engramdb.platform.graph import connect
    from engramdb.platform.interfaces import analyst

    if list_examples:
        _print_examples(analyst.examples(), as_json)
        return
    params = analyst.parse_params(assignments)
    settings = ctx.settings()
    seconds = _cypher_timeout(settings, timeout)
    if example_name and query:
        raise InputError("give either a QUERY or --example NAME, not both")
    if example_name:
        entry = analyst.example(example_name)
        params = analyst.example_params(entry, params)
        text = entry.text
    elif query:
        text = read_stdin_text("the query on stdin") if query == "-" else query
    else:
        raise InputError("give a QUERY (or - to read it from stdin), --example NAME, or --list")
    driver = connect(settings)
    try:
        result = analyst.run_cypher(
            driver, text, {**params, "namespace": settings.namespace}, database=settings.neo4j_database,
            limit=limit if limit is not None else settings.analyst_row_limit,
            timeout=seconds, max_timeout=settings.cypher_max_timeout, example_name=example_name,
        )  # fmt: skip
    finally:
        driver.close()
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2, ensure_ascii=False, default=str))
        return
    shown, hidden = analyst.table_columns(result)
    table = Table(show_lines=False, header_style="bold")
    for column in shown:
        table.add_column(Text(visible(column)), overflow="fold")
    for row in result.rows:
        table.add_row(*(Text(visible(analyst.caption(row[c]))) for c in shown))
    console.print(table)
    if hidden:
        err_console.print(f"graph columns not shown in the table: {', '.join(hidden)} (see them with --json or "
                          "in Neo4j Browser)", highlight=False, markup=False)  # fmt: skip
    more = f"; more rows exist (raise --limit, now {result.limit})" if result.truncated else ""
    err_console.print(
        f"{len(result.rows)} row{'' if len(result.rows) == 1 else 's'} in {result.seconds:.2f} s{more}",
        highlight=False,
        markup=False,
    )


def _cypher_timeout(settings: Settings, given: float | None) -> float:
    """The query's timeout: ``--timeout`` (else ``analyst_timeout``), refused unless a positive number,
    clamped to ``cypher_max_timeout`` with a one-line note, so one query cannot hold the server forever."""
    from engramdb.platform.interfaces.analyst import bounded_timeout

    wanted = given if given is not None else settings.analyst_timeout
    seconds = bounded_timeout(wanted, settings.cypher_max_timeout)
    if seconds < wanted:
        source = "--timeout" if given is not None else "analyst_timeout"
        err_console.print(f"[yellow]note:[/] {source} {wanted:g} s is above cypher_max_timeout; the query "
                          f"may run at most {seconds:g} s", highlight=False)  # fmt: skip
    return seconds


def _print_examples(entries: list[Any], as_json: bool) -> None:
    """The catalogue: name, description and the --param each needs (with the header's example value)."""
    if as_json:
        click.echo(json.dumps([{"name": e.name, "description": e.description, "params": e.params}
                               for e in entries], indent=2))  # fmt: skip
        return
    table = Table(header_style="bold")
    table.add_column("name", no_wrap=True)
    table.add_column("what it shows", overflow="fold")
    table.add_column("parameters", overflow="fold")
    for entry in entries:
        params = "\n".join(f"{name} (e.g. {value})" for name, value in entry.params.items())
        table.add_row(Text(entry.name), Text(entry.description), Text(params))
    console.print(table)
    err_console.print("run one: engramdb cypher --example NAME --param NAME=VALUE; the files are in "
                      f"{EXAMPLES_HINT}", highlight=False, markup=False)  # fmt: skip


EXAMPLES_HINT = "cypher/examples/ (paste one into Neo4j Browser after :param namespace => '<namespace>')"


@main.command("browser")
@click.option(
    "--style", "style_only", is_flag=True, help="Print only the :style command (to paste into Browser)."
)
@memory_options
@pass_context
@friendly_errors
def browser_command(ctx: Context, style_only: bool) -> None:
    """Where Neo4j Browser is, how to log in, and how engramdb's style sheet gets applied."""
    from engramdb.platform.browser_style import STYLE_FILE, style_command
    from engramdb.platform.neo4j_server import POST_CONNECT_SETTING, LocalNeo4j, browser_post_connect_command

    if style_only:
        click.echo(style_command())
        return
    settings = ctx.settings()
    namespace_line = f":param namespace => '{settings.namespace}'"
    if settings.uses_local_neo4j:
        server = LocalNeo4j(settings)
        status = server.status()
        conf = server.conf_dir / "neo4j.conf"
        console.print(f"Browser:  {escape(server.browser_url)}", highlight=False)
        console.print(f"connect:  {escape(server.bolt_uri)}  user neo4j, password in "
                      f"{escape(str(server.password_file))}", highlight=False)  # fmt: skip
        applied = (
            conf.is_file() and f"{POST_CONNECT_SETTING}={browser_post_connect_command()}" in conf.read_text()
        )
        if not status.running:
            console.print("server:   not running: `engramdb neo4j start` (the style then applies at every login)",
                          highlight=False, markup=False)  # fmt: skip
        elif applied:
            console.print(f"style:    applied at every login ({POST_CONNECT_SETTING} in {escape(str(conf))})",
                          highlight=False)  # fmt: skip
        else:
            console.print("style:    this server was started with an older style: restart it (`engramdb neo4j "
                          "stop` then `start`), or paste the command from `engramdb browser --style`",
                          highlight=False, markup=False)  # fmt: skip
    else:
        console.print(f"connect:  {escape(str(settings.neo4j_uri))}  user {escape(settings.neo4j_user)} "
                      "(the password you configured); open your server's Browser", highlight=False)  # fmt: skip
        console.print("style:    engramdb does not configure an external server: paste the one command "
                      "`engramdb browser --style` prints into Browser's editor", highlight=False, markup=False)  # fmt: skip
    console.print(
        f"then:     {escape(namespace_line)}   (every example query takes $namespace)", highlight=False
    )
    console.print(f"queries:  `engramdb cypher --list`; files in {escape(str(STYLE_FILE.parent.parent / 'examples'))}",
                  highlight=False)  # fmt: skip


# ------------------------------------------------------------------- eval
@main.command("eval")
@click.argument("dataset", type=click.Path(path_type=Path))
@click.option(
    "--corpus",
    type=click.Path(path_type=Path),
    help="Corpus to build memory from (default: the dataset's own paragraphs).",
)
@click.option(
    "-s",
    "--strategy",
    "strategies",
    multiple=True,
    type=UserText("--strategy"),
    help="Strategy to run (repeatable; default: every registered strategy).",
)
@click.option(
    "--set",
    "assignments",
    multiple=True,
    metavar="STRATEGY.KEY=VALUE",
    type=UserText("a --set value"),
    help="Override a strategy's setting for this run, e.g. chain.beam_width=8 (repeatable).",
)
@click.option("--limit", type=int, help="Only the first N questions.")
@click.option(
    "--decomposition",
    type=click.Choice(["gold", "llm", "offline"]),
    help="Sub-questions for chain search (default: gold when the dataset has them).",
)
@click.option(
    "--out", type=click.Path(path_type=Path), help="Output folder (default ./eval-results/<dataset>)."
)
@click.option(
    "--budgets", type=TokenBudgets(), metavar="N,N,...",
    help="Run every strategy at each evidence-token budget (rows name@N, one table per budget).",
)  # fmt: skip
@memory_options
@pass_context
@friendly_errors
def eval_command(ctx: Context, dataset: Path, corpus: Path | None, strategies: tuple[str, ...],
                 assignments: tuple[str, ...], limit: int | None, decomposition: str | None,
                 out: Path | None, budgets: tuple[int, ...] | None) -> None:  # fmt: skip
    """Evaluate strategies side by side on DATASET (MuSiQue format or [{question, answer}])."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from engramdb.ingestion.documents import make_document
    from engramdb.ingestion.loaders import load_path
    from engramdb.platform.errors import InputError
    from engramdb.platform.interfaces.memory import Memory
    from engramdb.retrieval.eval.data import load_dataset
    from engramdb.retrieval.eval.harness import EvalRunner, run_eval, summarize
    from engramdb.retrieval.eval.report import budget_tables, write_report
    from engramdb.retrieval.strategy import parse_assignments, strategy_class, strategy_names

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
        decomposition = (
            "gold" if all(i.gold_decomposition for i in items) else ("llm" if settings.llm else "offline")
        )
    if decomposition == "llm" and not settings.llm:
        raise InputError(
            "--decomposition llm needs an LLM: set ENGRAMDB_LLM (e.g. openai:gpt-4o-mini) and its key"
        )
    names = list(dict.fromkeys(strategies)) or strategy_names()
    for name in names:
        strategy_class(name)  # unknown names fail before any work, with the list of known ones
    per_strategy = _per_strategy(parse_assignments(assignments))
    out_dir = out or Path("eval-results") / dataset.stem
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Memory(settings=settings) as memory:
        with Progress(*columns, console=err_console) as bar:
            task = bar.add_task("build memory", total=len(documents))
            memory.ingest(documents, progress=lambda n: bar.advance(task, n))
        mode = "offline" if decomposition in ("gold", "offline") else "llm"
        runners = [
            EvalRunner(memory.strategy(name, decomposition=mode, **per_strategy.get(name, {})), decomposition)
            for name in names
        ]
        with Progress(*columns, console=err_console) as bar:
            task = bar.add_task("evaluate", total=len(items))
            records = run_eval(
                runners, items, progress=lambda n: bar.advance(task, n), token_budgets=budgets or ()
            )
        summary = summarize(records)
        meta = {"dataset": str(dataset), "corpus": str(corpus or "dataset paragraphs"), "passages": len(documents),
                "questions": len(items), "namespace": memory.namespace, "decomposition": decomposition,
                "llm": settings.llm or "none (offline)", "embedder": memory.embedder.name,
                "budgets": list(budgets or [])}  # fmt: skip
    paths = write_report(out_dir, meta, summary, records)
    console.print("\n".join(budget_tables(summary)), highlight=False, markup=False)
    console.print(
        f"results: {paths['json']}, {paths['markdown']}, plots in {out_dir}", highlight=False, markup=False
    )


# ---------------------------------------------------------- config/doctor
@main.group()
def config() -> None:
    """Inspect settings."""


@config.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@memory_options
@pass_context
@friendly_errors
def config_show(ctx: Context, as_json: bool) -> None:
    """Show effective settings (secrets masked)."""
    from engramdb.retrieval.strategy import make_recipe, strategy_names

    settings = ctx.settings()
    data = settings.masked()
    data.pop("ask", None)
    recipes = {name: make_recipe(name, settings.ask.get(name)).model_dump() for name in strategy_names()}
    if as_json:
        click.echo(json.dumps({**data, "ask": recipes}, indent=2, default=str))
        return
    for key, value in data.items():
        console.print(f"{key:24} {'' if value is None else value}", highlight=False, markup=False)
    for name, recipe in recipes.items():
        for knob, value in recipe.items():
            console.print(f"{'ask.' + name + '.' + knob:24} {value}", highlight=False, markup=False)


@main.command()
@home_option
@pass_context
@friendly_errors
def doctor(ctx: Context) -> None:
    """Check Java, Neo4j, Qdrant, models and API keys."""
    from engramdb.platform.interfaces.doctor import run_checks

    checks = run_checks(ctx.settings())
    for check in checks:
        mark = "[green]ok[/]  " if check.ok else "[red]FAIL[/]"
        console.print(f"{mark} {escape(check.name):24} {escape(str(check.detail))}", highlight=False)
    if not all(c.ok for c in checks):
        sys.exit(1)


# ------------------------------------------------------------ serve / token
@main.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, type=UserText("--host"),
              help="Address to listen on; anything but loopback needs a token first (`engramdb token show`).")  # fmt: skip
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535),
              help="Port to listen on (0: any free port; the startup line names it).")  # fmt: skip
@home_option
@pass_context
@friendly_errors
def serve_command(ctx: Context, host: str, port: int) -> None:
    """Serve the REST API: this process owns the memory and many clients share it (Ctrl-C stops it).

    One line on stderr gives the URL; everything else goes to <home>/logs/server.log. Clients send
    `Authorization: Bearer <token>` (`engramdb token show`). Needs `pip install 'engramdb[server]'`.
    """
    from engramdb.platform.interfaces.server import serve

    serve(ctx.settings(), host, port,
          announce=lambda line: err_console.print(line, highlight=False, markup=False))  # fmt: skip


@main.command("mcp")
@click.option("--server", "server_url", metavar="URL", type=UserText("--server"),
              help="Go through the engramdb server at URL (default: $ENGRAMDB_SERVER_URL, else the running "
              "server of the data home, else open the memory here).")  # fmt: skip
@memory_options
@pass_context
@friendly_errors
def mcp_command(ctx: Context, server_url: str | None) -> None:
    """Serve the memory to an MCP client (desktop assistant, IDE) over stdin/stdout.

    Tools: ask, remember, list_documents, forget, query_graph; documents are resources. When a server
    runs for the data home (`engramdb serve`), every call goes through it; otherwise this process owns
    the memory until the client closes the connection. `-n` sets the default namespace.
    """
    from engramdb.platform.interfaces.mcp_tools import run_stdio

    run_stdio(ctx.settings(), server_url or ctx.server_url)


@main.group("token")
def token_group() -> None:
    """Access tokens of `engramdb serve` (kept in the data home, readable by you only)."""


@token_group.command("show")
@home_option
@pass_context
@friendly_errors
def token_show(ctx: Context) -> None:
    """Print the admin token (every namespace, analyst Cypher), creating it if there is none yet."""
    from engramdb.platform.interfaces.server_tokens import admin_token_path, ensure_admin_token

    home = ctx.settings().home
    token, created = ensure_admin_token(home)
    if created:
        err_console.print(f"note: created the admin token in {admin_token_path(home)}", highlight=False,
                          markup=False)  # fmt: skip
    click.echo(token)


@token_group.command("create")
@click.option("-n", "--namespace", "namespaces", multiple=True, required=True, type=UserText("--namespace"),
              help="A namespace the token may use (repeatable).")  # fmt: skip
@home_option
@pass_context
@friendly_errors
def token_create(ctx: Context, namespaces: tuple[str, ...]) -> None:
    """Create a token limited to NAMESPACES (no analyst Cypher) and print it; only its hash is kept."""
    from engramdb.platform.interfaces.server_tokens import create_scoped_token

    token, token_id = create_scoped_token(ctx.settings().home, list(namespaces))
    err_console.print(f"note: token {token_id} for namespace{'s' if len(set(namespaces)) > 1 else ''} "
                      f"{', '.join(sorted(set(namespaces)))}; only its hash is stored, so keep it now "
                      "(a running server accepts it at once)", highlight=False, markup=False)  # fmt: skip
    click.echo(token)


if __name__ == "__main__":  # pragma: no cover
    main()

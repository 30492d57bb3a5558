"""Hostile input never gives a traceback: the CLI answers with one ``error:`` line (exit 1), or copes.

Covered here, through the real CLI against the session's real Neo4j:

* text arguments that are not UTF-8 (Python hands them over as lone surrogates): the
  question, the Cypher query (argument or stdin), ``--set``, ``--param``, ``-n``, document ids;
* stored text holding terminal control sequences (``ESC ]0;... BEL`` retitles a terminal,
  ``ESC [31m`` recolours it): shown as visible escapes, kept as stored in ``--json``;
* ``cypher --timeout`` that is not a positive finite number, or above ``cypher_max_timeout``;
* a closed output pipe: exit 141, nothing on stderr;
* the local Neo4j started by the CLI itself: one ``note:`` line on stderr.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from engramdb.platform.errors import InputError
from engramdb.platform.interfaces import analyst
from engramdb.platform.interfaces.analyst import QueryTimedOut
from engramdb.platform.interfaces.cli import EXIT_CLOSED_PIPE, main, show_sdk_notices
from engramdb.platform.interfaces.memory import Memory
from engramdb.platform.text_safety import require_unicode, visible
from tests.conftest import cli_environment, free_ports, private_settings

ENGRAMDB = Path(sys.executable).with_name("engramdb")
TITLE_ESCAPE = "\x1b]0;pwned\x07"  # sets the terminal's title to "pwned"
RED = "\x1b[31m"
EVIL_TEXT = (
    f"Oslo is the capital of Norway. {RED}Oslo has a large harbour\x1b[0m, many museums and parks. "
    f"The title of this window is {TITLE_ESCAPE} now. Norway is a country in northern Europe with long "
    "coasts, deep fjords and high mountains, and Oslo is its largest city by far."
)
EVIL_TITLE = f"Oslo {TITLE_ESCAPE} the capital city of Norway and its old harbour"
#: A query that runs for minutes unless the server stops it.
SLOW_QUERY = (
    "UNWIND range(1, 100000) AS a UNWIND range(1, 100000) AS b WITH a, b WHERE a * b < 0 RETURN count(*)"
)


@pytest.fixture(scope="module")
def mem(tmp_path_factory, neo4j_server, settings, driver):
    """One namespace holding a document whose text and title carry terminal control sequences."""
    cfg = private_settings(tmp_path_factory.mktemp("hostile-home"), neo4j_server, settings)
    memory = Memory(namespace=f"ho{uuid.uuid4().hex[:12]}", settings=cfg)
    report = memory.ingest([{"id": "oslo", "title": EVIL_TITLE, "text": EVIL_TEXT}])
    assert report.ingested == 1, report
    yield memory
    memory.close()


@pytest.fixture
def cli_env(mem: Memory) -> dict[str, str]:
    return {**cli_environment(mem.settings, mem.namespace), "COLUMNS": "200"}


def run(env: dict[str, str], *args: str, input: str | bytes | None = None):
    return CliRunner().invoke(main, list(args), env=env, input=input, catch_exceptions=False)


def one_error_line(result, message: str) -> None:
    """Exit 1, and the whole output is the one ``error:`` line (no traceback, no usage block)."""
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert result.output.splitlines() == [f"error: {message}"]


def namespace_size(mem: Memory) -> tuple[int, int]:
    """Nodes and relationships of the namespace: what "nothing was written" is checked against."""
    row = mem.driver.execute_query(
        "MATCH (n {namespace: $ns}) OPTIONAL MATCH (n)-[r]->() RETURN count(DISTINCT n) AS n, count(r) AS r",
        ns=mem.namespace,
    ).records[0]
    return row["n"], row["r"]


def process_env(cli_env: dict[str, str]) -> dict[str, str]:
    return {**os.environ, **cli_env}


# --------------------------------------------------------------------------- invalid UTF-8 arguments


@pytest.mark.parametrize("strategy", ["chain", "dense", "hypergraph"])
def test_a_question_that_is_not_utf8_is_one_error_line(cli_env, mem: Memory, strategy: str) -> None:
    before = namespace_size(mem)
    question = b"\xff\xfe?".decode("utf-8", "surrogateescape")  # what Python makes of argv bytes
    result = run(cli_env, "ask", "-s", strategy, question)
    one_error_line(result, "the question is not valid UTF-8 (byte 0xff at position 0)")
    assert namespace_size(mem) == before


def test_invalid_bytes_from_a_real_command_line(cli_env) -> None:
    """The bytes as a shell passes them, decoded by Python itself (not by the test)."""
    done = subprocess.run([ENGRAMDB, b"ask", b"Where is \xe9Oslo?"], env=process_env(cli_env),
                          capture_output=True, timeout=120)  # fmt: skip
    assert done.returncode == 1 and done.stdout == b""
    assert done.stderr == b"error: the question is not valid UTF-8 (byte 0xe9 at position 9)\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("cypher", "RETURN 'caf\udce9' AS x"), "the query is not valid UTF-8 (byte 0xe9 at position 11)"),
        (("cypher", "RETURN $v AS v", "-p", "v=\udcff"), "a --param value is not valid UTF-8 (byte 0xff at position 2)"),
        (("ask", "Where is Oslo?", "--set", "top_k=\udcff"), "a --set value is not valid UTF-8 (byte 0xff at position 6)"),
        (("ask", "Where is Oslo?", "--decomposition", '[["\udcff"]]'),
         "--decomposition is not valid UTF-8 (byte 0xff at position 3)"),
        (("stats", "-n", "ns\udcff"), "the namespace (-n) is not valid UTF-8 (byte 0xff at position 2)"),
        (("-n", "ns\udcff", "documents"), "the namespace (-n) is not valid UTF-8 (byte 0xff at position 2)"),
        (("delete", "oslo", "\udcffslo"), "a document id is not valid UTF-8 (byte 0xff at position 0)"),
    ],
)  # fmt: skip
def test_every_text_argument_is_checked(cli_env, mem: Memory, args: tuple[str, ...], message: str) -> None:
    before = namespace_size(mem)
    one_error_line(run(cli_env, *args), message)
    assert namespace_size(mem) == before  # the delete above did not remove "oslo" either
    assert [d["id"] for d in mem.documents()] == ["oslo"]


def test_a_query_on_stdin_that_is_not_utf8_is_one_error_line(cli_env) -> None:
    result = run(cli_env, "cypher", "-", input=b"RETURN 'caf\xe9' AS x")
    one_error_line(result, "the query on stdin is not valid UTF-8 (byte 0xe9 at position 11)")


def test_sdk_callers_get_an_input_error_for_lone_surrogates(mem: Memory) -> None:
    with pytest.raises(InputError, match=r"the question is not valid Unicode text: a lone surrogate U\+D800 "
                                         r"at character 4"):  # fmt: skip
        require_unicode("Who \ud800?", "the question")
    assert require_unicode("Zoë in Oslo", "the question") == "Zoë in Oslo"
    with pytest.raises(
        InputError, match=r"the parameter \$names is not valid UTF-8 \(byte 0xff at position 1\)"
    ):
        analyst.run_cypher(mem.driver, "RETURN $names AS n", {"names": ["ok", {"k": "x\udcff"}]})
    with pytest.raises(InputError, match=r"the query is not valid Unicode text: a lone surrogate U\+D800"):
        analyst.run_cypher(mem.driver, "RETURN '\ud800' AS x", {})


# --------------------------------------------------------------------------- control characters


def test_ask_shows_control_characters_and_json_keeps_them(cli_env) -> None:
    shown = run(cli_env, "ask", "-s", "dense", "What is the capital of Norway?")
    assert shown.exit_code == 0, shown.output
    assert "\x1b" not in shown.stdout and "\x07" not in shown.stdout and "\x1b" not in shown.stderr
    assert "\\x1b[31mOslo" in shown.stdout
    assert shown.stdout.count("\\x1b]0;pwned\\x07") >= 2  # in the text, and in the title it cites

    as_json = run(cli_env, "ask", "-s", "dense", "What is the capital of Norway?", "--json")
    assert as_json.exit_code == 0 and "\x1b" not in as_json.stdout  # JSON escapes it: \u001b
    data = json.loads(as_json.stdout)
    assert TITLE_ESCAPE in data["evidence"][0]["text"] and RED in data["evidence"][0]["text"]
    assert data["citations"][0]["title"] == EVIL_TITLE


def test_documents_cypher_and_error_lines_show_control_characters(cli_env) -> None:
    listing = run(cli_env, "documents")
    assert listing.exit_code == 0 and "\x1b" not in listing.output and "\x07" not in listing.output
    assert "Oslo \\x1b]0;pwned\\x07 the" in listing.output
    assert json.loads(run(cli_env, "documents", "--json").stdout)[0]["title"] == EVIL_TITLE

    table = run(cli_env, "cypher", "MATCH (d:Document {namespace: $namespace}) RETURN d.title AS title")
    assert table.exit_code == 0 and "\x1b" not in table.output and "\\x1b]0;pwned\\x07" in table.output
    rows = json.loads(run(cli_env, "cypher", "MATCH (d:Document {namespace: $namespace}) RETURN d.title AS t",
                          "--json").stdout)["rows"]  # fmt: skip
    assert rows == [{"t": EVIL_TITLE}]

    # Neo4j quotes the query back in its syntax error: the error line shows the escape, not the byte.
    bad = run(cli_env, "cypher", f"RETURN {RED}")
    assert bad.exit_code == 1 and bad.output.startswith("error: Cypher syntax error")
    assert "\x1b" not in bad.output and "RETURN \\x1b[31m" in bad.output
    missing = run(cli_env, "delete", f"ghost{TITLE_ESCAPE}")
    assert (
        missing.exit_code == 1
        and "\x1b" not in missing.output
        and "ghost\\x1b]0;pwned\\x07" in missing.output
    )


def test_the_ask_renderer_makes_control_characters_visible_on_any_console() -> None:
    """SDK users print with their own rich Console: render_result itself must not pass ESC through."""
    from rich.console import Console

    from engramdb.retrieval.render import render_result
    from engramdb.retrieval.results import AskResult, Citation, Evidence

    evidence = Evidence("passage", "oslo#0", EVIL_TEXT, 0.8, "oslo", ("oslo#0",), {})
    result = AskResult(question=f"Where{RED} is Oslo?", answer=f"Norway{TITLE_ESCAPE}", answered_by="test",
                       evidence=[evidence], citations=[Citation("oslo#0", "oslo#0", "oslo", EVIL_TITLE, "")],
                       decomposition=[], notes=[f"note {TITLE_ESCAPE}"], evidence_tokens=10,
                       timings={"total": 0.01})  # fmt: skip
    console = Console(width=300, force_terminal=False)  # no styles: any ESC in the output came from the text
    with console.capture() as captured:
        render_result(console, result)
    raw = captured.get()
    assert "\x1b" not in raw and "\x07" not in raw
    assert "Where\\x1b[31m is Oslo?" in raw and "Answer: Norway\\x1b]0;pwned\\x07" in raw
    assert "note: note \\x1b]0;pwned\\x07" in raw and "Oslo \\x1b]0;pwned\\x07 the capital" in raw


def test_visible_keeps_layout_characters_and_shows_the_rest() -> None:
    assert (
        visible(f"a\tb\nc{TITLE_ESCAPE}\r\x7f\x9b\u202e") == "a\tb\nc\\x1b]0;pwned\\x07\\x0d\\x7f\\x9b\\u202e"
    )
    assert visible("one\ttwo\nthree", one_line=True) == "one two three"
    assert visible("Zoë – “quoted” 東京") == "Zoë – “quoted” 東京"


# --------------------------------------------------------------------------- cypher --timeout


@pytest.mark.parametrize(("value", "shown"), [("nan", "nan"), ("inf", "inf"), ("-1", "-1"), ("0", "0")])
def test_cypher_timeout_must_be_a_positive_finite_number(cli_env, value: str, shown: str) -> None:
    result = run(cli_env, "cypher", f"--timeout={value}", "RETURN 1 AS one")
    one_error_line(result, f"--timeout must be a finite number of seconds above 0, got {shown}")


def test_a_huge_cypher_timeout_is_clamped_with_a_note(cli_env) -> None:
    result = run(cli_env, "cypher", "--timeout", "1e9", "RETURN 41 + 1 AS answer")
    assert result.exit_code == 0, result.output
    assert "42" in result.stdout
    assert result.stderr.splitlines()[0] == (
        "note: --timeout 1e+09 s is above cypher_max_timeout; the query may run at most 300 s"
    )
    # The clamp is real: with a ceiling of 1 s the server stops a slow query after 1 s, not 1e9.
    capped = run({**cli_env, "ENGRAMDB_CYPHER_MAX_TIMEOUT": "1"}, "cypher", "--timeout", "1e9", SLOW_QUERY)
    assert capped.exit_code == 1
    assert capped.output.splitlines()[0] == (
        "note: --timeout 1e+09 s is above cypher_max_timeout; the query may run at most 1 s"
    )
    assert capped.output.splitlines()[1].startswith("error: the query was stopped by the server after 1 s")
    bad = run({**cli_env, "ENGRAMDB_CYPHER_MAX_TIMEOUT": "inf"}, "cypher", "RETURN 1 AS one")
    assert bad.exit_code == 1 and "cypher_max_timeout: Input should be a finite number" in bad.output


def test_sdk_run_cypher_validates_and_clamps_the_timeout(mem: Memory) -> None:
    for bad in (float("nan"), float("inf"), -1.0, 0.0):
        with pytest.raises(InputError, match="--timeout must be a finite number of seconds above 0"):
            analyst.run_cypher(mem.driver, "RETURN 1 AS one", {}, timeout=bad)
    assert analyst.bounded_timeout(1e9, 300) == 300 and analyst.bounded_timeout(5, 300) == 5
    with pytest.raises(QueryTimedOut, match=r"stopped by the server after 1 s"):
        analyst.run_cypher(mem.driver, SLOW_QUERY, {}, timeout=1e9, max_timeout=1)


# --------------------------------------------------------------------------- closed pipes


def run_into_closed_pipe(cli_env: dict[str, str], *args: str) -> subprocess.CompletedProcess[bytes]:
    """Run the CLI with stdout a pipe whose reader is already gone: its first write fails."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([ENGRAMDB, *args], env=process_env(cli_env), stdout=write_end,
                              stderr=subprocess.PIPE, timeout=120)  # fmt: skip
    finally:
        os.close(write_end)


@pytest.mark.parametrize(
    "args",
    [
        ("documents",),  # a rich table
        ("cypher", "UNWIND range(1, 2000) AS i RETURN i", "--limit", "2000", "--json"),  # click.echo
        ("cypher", "RETURN 1 AS one"),  # a rich table, then a row count on stderr that never comes
        ("--help",),  # printed while click parses the arguments
    ],
)
def test_a_closed_pipe_exits_141_quietly(cli_env, args: tuple[str, ...]) -> None:
    done = run_into_closed_pipe(cli_env, *args)
    assert done.returncode == EXIT_CLOSED_PIPE == 141
    assert done.stderr == b""


def test_head_closing_the_pipe_in_a_shell_pipeline_is_quiet(cli_env, tmp_path: Path) -> None:
    """``engramdb documents | head -c0``: the reader is gone before the first write."""
    err = tmp_path / "stderr"
    script = f"'{ENGRAMDB}' documents 2>'{err}' | head -c0; exit ${{PIPESTATUS[0]}}"
    done = subprocess.run(["bash", "-c", script], env=process_env(cli_env), timeout=120)
    assert done.returncode == 141 and err.read_text() == ""


# --------------------------------------------------------------------------- the autostart note


def test_sdk_notices_print_one_line_each(capsys: pytest.CaptureFixture[str]) -> None:
    from engramdb.platform.graph import NOTICE

    show_sdk_notices()
    show_sdk_notices()  # idempotent: still one handler, so one line per record
    log = logging.getLogger("engramdb")
    uri = "bolt://127.0.0.1:7687"
    log.info("started the local Neo4j at %s; it keeps running until `engramdb neo4j stop`", uri,
             extra={NOTICE: True})  # fmt: skip
    log.info("waiting for the store lock")  # plain INFO: not for the command line
    log.warning("could not store the calibration: [bold]disk full%s", "\x1b[0m")
    assert capsys.readouterr().err.splitlines() == [
        f"note: started the local Neo4j at {uri}; it keeps running until `engramdb neo4j stop`",
        "warning: could not store the calibration: [bold]disk full\\x1b[0m",
    ]


def test_the_cli_announces_the_neo4j_it_starts(tmp_path: Path, settings) -> None:
    """A fresh data home with no server: the first command starts one and says so in one line;
    the next command, finding it running, says nothing. A server of its own, never the suite's."""
    from engramdb.platform.neo4j_server import LocalNeo4j

    bolt, http = free_ports(2)
    env = {**os.environ, "ENGRAMDB_HOME": str(tmp_path / "home"), "ENGRAMDB_NEO4J_BOLT_PORT": str(bolt),
           "ENGRAMDB_NEO4J_HTTP_PORT": str(http), "ENGRAMDB_NEO4J_HEAP": "256m",
           "ENGRAMDB_NEO4J_PAGECACHE": "64m", "ENGRAMDB_CONFIG": "none"}  # fmt: skip
    server = LocalNeo4j(settings.model_copy(update={"home": tmp_path / "home", "neo4j_bolt_port": bolt,
                                                    "neo4j_http_port": http}))  # fmt: skip
    assert server.pid() is None
    try:
        first = subprocess.run([ENGRAMDB, "documents"], env=env, capture_output=True, text=True, timeout=300)
        assert first.returncode == 0, first.stderr
        notes = [line for line in first.stderr.splitlines() if "Neo4j" in line]
        assert notes == [f"note: started the local Neo4j at bolt://127.0.0.1:{bolt}; it keeps running until "
                         "`engramdb neo4j stop`"]  # fmt: skip
        assert server.pid() is not None
        second = subprocess.run([ENGRAMDB, "documents"], env=env, capture_output=True, text=True, timeout=300)
        assert second.returncode == 0 and "Neo4j" not in second.stderr
    finally:
        server.stop()

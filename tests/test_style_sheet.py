"""The Browser style sheet: parsed the way Neo4j Browser parses it, complete, and applied at login.

Neo4j Browser rejected the first style sheet ("Could not parse grass data")
because of a leading comment. These tests read ``cypher/browser/style.grass``
with a port of Browser's own parser, check the port against the parser shipped
in the Browser jar the local server serves (run with Node.js when it is
installed), check that every label and relationship type engramdb writes has a
caption, and that the local server's ``neo4j.conf`` hands the style to Browser
through its post-connect command. ``scripts/browser_screenshots.py`` shows the
real Browser applying it.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from engramdb.platform.browser_style import (
    STYLE_FILE,
    captions,
    grass_problems,
    parse_grass,
    style_command,
    style_rules,
)
from engramdb.platform.interfaces.cli import main
from engramdb.platform.neo4j_server import POST_CONNECT_SETTING, browser_post_connect_command

REPO = Path(__file__).resolve().parent.parent
CYPHER = REPO / "cypher"
#: The style sheet as first shipped: Browser rejected it.
COMMENTED = (
    "/* engramdb style sheet for Neo4j Browser: drag this file onto the Browser, or run :style and paste it. */\n"
    'node { diameter: 40px; }\nnode.Entity { color: #F79767; caption: "{name}"; }\n'
)
QUIRKS = [
    'node.Entity { caption: "{a}: {b}"; color: #fff; }',  # a colon in a value: the declaration is dropped
    "node { diameter: 50px; }\n\nrelationship{shaft-width:1px}",  # whitespace in selectors is dropped
    'node.X { caption: "{name}"; { nested: 1 } color: red; }',  # a nested block is not a rule
    '{"node": {"diameter": "50px"}, "node.Entity": {"caption": "{name}"}}',  # JSON is accepted as it is
]


def test_shipped_style_sheet_reads_as_written() -> None:
    text = STYLE_FILE.read_text()
    assert grass_problems(text) == []
    rules = style_rules()
    written = re.findall(r"^((?:node|relationship)[.\w]*)\s*\{", text, re.MULTILINE)
    assert list(rules) == written  # one rule per block, none merged or lost
    assert rules["node.Entity"]["caption"] == "{name}" and rules["relationship.QA"]["caption"] == "{question}"


def test_the_first_style_sheet_shows_why_browser_rejected_it() -> None:
    """``:style <text>`` keeps only what follows the first ``:style``; the comment held a second one."""
    pasted = (":style " + COMMENTED).split(":style")[1]
    assert parse_grass(pasted) == {}  # Browser: "Could not parse grass data"
    assert any("comments" in p for p in grass_problems(COMMENTED))
    assert any(":style" in p for p in grass_problems(COMMENTED))
    assert ":style" not in STYLE_FILE.read_text()
    assert parse_grass((":style " + STYLE_FILE.read_text()).split(":style")[1]) == style_rules()


def test_port_keeps_the_browsers_quirks() -> None:
    assert parse_grass(QUIRKS[0]) == {"node.Entity": {"color": "#fff"}}
    assert parse_grass(QUIRKS[1]) == {"node": {"diameter": "50px"}, "relationship": {"shaft-width": "1px"}}
    assert any("survive" in p for p in grass_problems(QUIRKS[0]))


def browser_parser_source(neo4j_server) -> str:
    """Browser's ``parseGrass`` function, cut from the app bundle inside the Browser jar the server serves."""
    jars = sorted(Path(neo4j_server.lib).glob("neo4j-browser-*.jar"))
    assert jars, f"no Browser jar in {neo4j_server.lib}"
    with zipfile.ZipFile(jars[-1]) as jar:
        bundles = [n for n in jar.namelist() if re.fullmatch(r"browser/app-[0-9a-f]+\.js", n)]
        source = jar.read(bundles[0]).decode()
    match = re.search(r"\.parseGrass=(function\(e\)\{.*?\}\(e\)\}return t\}),t\.objToCss=", source)
    assert match, "Browser's parseGrass was not found in its bundle"
    return match.group(1)


def test_port_matches_the_parser_inside_the_browser_jar(neo4j_server) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed: the port is checked against the jar's parser only with node")
    inputs = [STYLE_FILE.read_text(), COMMENTED, (":style " + COMMENTED).split(":style")[1], *QUIRKS]
    program = (f"const parseGrass = {browser_parser_source(neo4j_server)};\n"
               "const inputs = JSON.parse(require('fs').readFileSync(0, 'utf8'));\n"
               "process.stdout.write(JSON.stringify(inputs.map(parseGrass)));\n")  # fmt: skip
    done = subprocess.run([node, "-e", program], input=json.dumps(inputs), capture_output=True, text=True,
                          timeout=60, check=True)  # fmt: skip
    assert json.loads(done.stdout) == [parse_grass(text) for text in inputs]


def written_labels_and_types() -> tuple[set[str], set[str]]:
    """Labels and relationship types in engramdb's Cypher (not the examples) and its neomodel classes."""
    labels, types = set(), set()
    for path in CYPHER.rglob("*.cypher"):
        if path.relative_to(CYPHER).parts[0] in {"examples", "browser"}:
            continue
        text = re.sub(r"//.*", "", path.read_text())
        labels |= set(re.findall(r"\(\s*\w*\s*:\s*([A-Z][A-Za-z]+)", text))
        labels |= set(re.findall(r"\bFOR\s+\(\w+:([A-Z][A-Za-z]+)\)", text))
        for group in re.findall(r"\[\s*\w*\s*:\s*([A-Z_|]+)", text):
            types |= set(group.split("|"))
    tree = ast.parse((REPO / "platform" / "models.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and any(getattr(b, "id", "") == "Namespaced" for b in node.bases):
            labels.add(node.name)
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "RelationshipTo":
            types.add(node.args[1].value)  # type: ignore[attr-defined]
    return labels, types


def test_every_label_and_relationship_type_engramdb_writes_has_a_caption() -> None:
    labels, types = written_labels_and_types()
    assert {"Document", "Chunk", "Entity", "VerbPhrase", "Gist", "Query", "MemoryPoint", "Cluster",
            "Replica"} <= labels  # fmt: skip
    assert {"QA", "ROLE_IN", "HAS_GIST", "HAS_POINT", "INVOLVES", "MERGED_FROM", "HAS_MEMBER", "SIMILAR",
            "REPLICA_OF", "SUPPORTED_BY", "REVISES"} <= types  # fmt: skip
    styled = captions()
    assert sorted(label for label in labels if f"node.{label}" not in styled) == []
    assert sorted(kind for kind in types if f"relationship.{kind}" not in styled) == []
    assert styled["node.VerbPhrase"] == "{text}" and styled["node.Query"] == "{question}"
    assert "{description}" in styled["node.MemoryPoint"] and "{title}" in styled["node.Cluster"]
    assert "{text}" in styled["node.Gist"] and "{title}" in styled["node.Chunk"]
    colors = [rule["color"] for selector, rule in style_rules().items() if selector.startswith("node.")]
    assert len(set(colors)) >= len(colors) - 1  # one colour per label (Query and its old trace share one)


def extract_post_connect_commands(value: str) -> list[str]:
    """Browser's split of ``browser.post_connect_cmd``: at ``;`` outside backticks and quotes."""
    protected = value
    for pattern in (r"`[^`]*?`", r'"[^"]*?"', r"'[^']*?'"):
        protected = re.sub(pattern, lambda m: m.group(0).replace(";", "@@semicolon@@"), protected)
    parts = [p.strip().replace("@@semicolon@@", ";") for p in protected.split(";")]
    return [p for p in parts if p]


def test_post_connect_command_applies_exactly_the_style_sheet() -> None:
    value = browser_post_connect_command()
    commands = extract_post_connect_commands(value)
    assert commands == [value] and value.startswith("style {")
    grass = (":" + value).split(":style")[1]  # what Browser's :style handler parses
    assert parse_grass(grass) == style_rules() and style_command() == ":" + value


def test_local_server_hands_the_style_to_browser(neo4j_server, driver) -> None:
    """neo4j.conf carries the command, and the running server serves it to Browser unchanged."""
    conf = (neo4j_server.conf_dir / "neo4j.conf").read_text()
    assert f"{POST_CONNECT_SETTING}={browser_post_connect_command()}\n" in conf
    records = driver.execute_query("CALL dbms.clientConfig()", database_="system").records
    served = {r["name"]: r["value"] for r in records}
    assert served.get(POST_CONNECT_SETTING) == browser_post_connect_command(), (
        "the test server runs with an older neo4j.conf: stop it so the suite restarts it"
    )


def test_browser_command_tells_where_and_how(neo4j_server, settings, isolated_settings) -> None:
    local_env = {"ENGRAMDB_HOME": str(settings.home), "ENGRAMDB_NEO4J_BOLT_PORT": str(settings.neo4j_bolt_port),
                 "ENGRAMDB_NEO4J_HTTP_PORT": str(settings.neo4j_http_port), "ENGRAMDB_CONFIG": "none",
                 "ENGRAMDB_NAMESPACE": "shelf", "COLUMNS": "250"}  # fmt: skip
    local = CliRunner().invoke(main, ["browser"], env=local_env, catch_exceptions=False)
    assert local.exit_code == 0
    assert neo4j_server.browser_url in local.output and str(neo4j_server.password_file) in local.output
    assert (
        "style:    applied at every login" in local.output and ":param namespace => 'shelf'" in local.output
    )
    assert neo4j_server.password() not in local.output
    external_env = {"ENGRAMDB_HOME": str(isolated_settings.home), "ENGRAMDB_NEO4J_URI": isolated_settings.neo4j_uri,
                    "ENGRAMDB_CONFIG": "none", "COLUMNS": "250"}  # fmt: skip
    external = CliRunner().invoke(main, ["browser"], env=external_env, catch_exceptions=False)
    assert external.exit_code == 0 and "engramdb browser --style" in external.output
    style = CliRunner().invoke(main, ["browser", "--style"], env=external_env, catch_exceptions=False)
    assert style.output.strip() == style_command()

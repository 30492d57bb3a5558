"""Every query name the code runs resolves to a ``.cypher`` file, and every file is parameterized.

Queries are named by their path below ``cypher/`` (``traversals/citations``);
a typo would only fail at run time on the path that uses it, so this test
finds every name the code passes to ``Graph.read``/``write``/``write_many`` or
``cypher_files.query``/``statements`` and checks the file exists.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CYPHER = REPO / "cypher"
QUERY_NAME = re.compile(r"^[a-z][a-z0-9_]*(/[a-z0-9_]+)+$")
RUNNERS = {"read", "write", "query", "statements", "read_query"}


def query_names_in(source: str) -> set[str]:
    """Query names passed to a runner call, or as the first item of a (name, params) step."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        candidate = None
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in RUNNERS:
                candidate = node.args[0]
        elif isinstance(node, ast.Tuple) and len(node.elts) == 2:
            candidate = node.elts[0]
        if isinstance(candidate, ast.Constant) and isinstance(candidate.value, str):
            if QUERY_NAME.match(candidate.value):
                names.add(candidate.value)
    return names


def test_every_query_name_used_in_code_has_a_file() -> None:
    used: dict[str, list[str]] = {}
    for top in ("platform", "ingestion", "retrieval"):
        for path in (REPO / top).rglob("*.py"):
            for name in query_names_in(path.read_text()):
                used.setdefault(name, []).append(str(path.relative_to(REPO)))
    assert len(used) > 20  # the scan really finds the queries
    missing = {name: files for name, files in used.items() if not (CYPHER / f"{name}.cypher").is_file()}
    assert missing == {}


def test_the_scan_finds_names_in_calls_and_steps() -> None:
    source = 'g.read("traversals/x", a=1)\nsteps = [("writers/y", {})]\nprint("not/a query name!")\n'
    assert query_names_in(source) == {"traversals/x", "writers/y"}


def test_memory_queries_filter_by_namespace() -> None:
    """Writers, traversals and strategy folders never run without $namespace (schema and examples
    excepted, and the few queries whose header says they span namespaces on purpose)."""
    exempt = {"schema", "examples", "browser"}
    unscoped = [
        str(p.relative_to(CYPHER))
        for p in CYPHER.rglob("*.cypher")
        if p.relative_to(CYPHER).parts[0] not in exempt
        and "$namespace" not in p.read_text()
        and "// spans namespaces" not in p.read_text()
    ]
    assert unscoped == []

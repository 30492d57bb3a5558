"""Layers point one way: foundation < ingestion < retrieval < SDK facade (Memory, CLI).

Every import counts, including the lazy ones inside functions (they still make
the lower layer depend on the upper one); only imports under
``if TYPE_CHECKING:`` are exempt, as they never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
#: The SDK facade and CLI: the only modules of platform/ allowed to import the layers above.
FACADE = {"platform/memory.py", "platform/cli.py", "platform/package_root.py"}
FACADE_PREFIX = "platform/sdk/"
RANK = {"foundation": 0, "ingestion": 1, "retrieval": 2, "sdk": 3}


def layer_of_file(path: Path) -> str:
    rel = path.relative_to(REPO).as_posix()
    if rel in FACADE or rel.startswith(FACADE_PREFIX):
        return "sdk"
    top = rel.split("/", 1)[0]
    return "foundation" if top == "platform" else top


def layer_of_module(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "engramdb" or len(parts) < 2:
        return None
    if parts[1] == "platform":
        rel = "/".join(parts[1:]) + ".py"
        if rel in FACADE or rel.startswith(FACADE_PREFIX) or parts[2:3] == ["sdk"]:
            return "sdk"
        return "foundation"
    return parts[1] if parts[1] in RANK else None


def _runtime_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of every import not guarded by ``if TYPE_CHECKING``."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for stmt in child.orelse:
                    visit(stmt)
                continue
            if isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                found.append((child.lineno, child.module))
            elif isinstance(child, ast.Import):
                found.extend((child.lineno, alias.name) for alias in child.names)
            visit(child)

    visit(tree)
    return found


def upward_imports_in(source: str, own: str, name: str) -> list[str]:
    problems = []
    for line, module in _runtime_imports(ast.parse(source, name)):
        target = layer_of_module(module)
        if target is not None and RANK[target] > RANK[own]:
            problems.append(f"{name}:{line} ({own}) imports {module} ({target})")
    return problems


def upward_imports(files: list[Path]) -> list[str]:
    return [
        problem
        for path in files
        for problem in upward_imports_in(path.read_text(), layer_of_file(path), str(path.relative_to(REPO)))
    ]


def code_files() -> list[Path]:
    return sorted(p for top in ("platform", "ingestion", "retrieval") for p in (REPO / top).rglob("*.py"))


def test_no_import_runs_from_a_lower_layer_to_a_higher_one() -> None:
    assert upward_imports(code_files()) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from engramdb.retrieval.results import AskResult\n", 1),
        ("def f():\n    from engramdb.platform.memory import Memory\n", 1),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from engramdb.retrieval import x\n", 0),
        ("from engramdb.platform.graph import Graph\n", 0),
    ],
)
def test_the_checker_sees_upward_imports_lazy_ones_included(source: str, expected: int) -> None:
    assert len(upward_imports_in(source, "ingestion", "probe.py")) == expected

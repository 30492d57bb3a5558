"""Layers point one way, and the four methods stay apart.

foundation (``platform/``) < ingestion < retrieval core (``retrieval/*.py``)
< method folders (``retrieval/chain``, ``diffusion``, ``hypergraph``, ``cluster``)
< retrieval tools (``retrieval/eval``, ``retrieval/integrations``)
< entry points (``platform/interfaces``: SDK facade, CLI, analyst, doctor).

A method folder never imports another method folder: what two methods share
belongs in the retrieval core. Every import counts, including the lazy ones
inside functions (they still make one part depend on the other); only imports
under ``if TYPE_CHECKING:`` are exempt, as they never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
METHODS = ("chain", "diffusion", "hypergraph", "cluster")
TOOLS = ("eval", "integrations")
#: Old import paths the README once named, kept as thin re-exports of the integrations.
SHIMS = {"retrieval/langchain_retriever.py", "retrieval/llamaindex_retriever.py"}
RANK = {"foundation": 0, "ingestion": 1, "retrieval": 2, "method": 3, "tools": 4, "entry": 5}


def layer_of_file(path: Path) -> str:
    """``layer`` or ``method:<name>`` for a file of the checkout."""
    rel = path.relative_to(REPO).as_posix()
    if rel in SHIMS:
        return "tools"
    return layer_of_module("engramdb." + rel.removesuffix(".py").replace("/", ".")) or "foundation"


def layer_of_module(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "engramdb" or len(parts) < 2:
        return None
    if parts[1] == "platform":
        return "entry" if parts[2:3] in (["interfaces"], ["package_root"]) else "foundation"
    if parts[1] == "ingestion":
        return "ingestion"
    if parts[1] == "retrieval":
        if parts[2:3] and parts[2] in METHODS:
            return f"method:{parts[2]}"
        if parts[2:3] and parts[2] in TOOLS:
            return "tools"
        return "retrieval"
    return None


def _rank(layer: str) -> int:
    return RANK[layer.split(":", 1)[0]]


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
                found.extend((child.lineno, f"{child.module}.{alias.name}") for alias in child.names)
            elif isinstance(child, ast.Import):
                found.extend((child.lineno, alias.name) for alias in child.names)
            visit(child)

    visit(tree)
    return found


def wrong_imports_in(source: str, own: str, name: str) -> list[str]:
    """Imports of ``source`` (a file of layer ``own``) that run up a layer or across methods."""
    problems = []
    seen: set[int] = set()
    for line, module in _runtime_imports(ast.parse(source, name)):
        target = layer_of_module(module)
        if target is None or line in seen:
            continue
        upward = _rank(target) > _rank(own)
        across = own.startswith("method:") and target.startswith("method:") and target != own
        if upward or across:
            seen.add(line)
            why = "another method" if across else "a higher layer"
            problems.append(f"{name}:{line} ({own}) imports {module} ({target}, {why})")
    return problems


def wrong_imports(files: list[Path]) -> list[str]:
    return [
        problem
        for path in files
        for problem in wrong_imports_in(path.read_text(), layer_of_file(path), str(path.relative_to(REPO)))
    ]


def code_files() -> list[Path]:
    return sorted(p for top in ("platform", "ingestion", "retrieval") for p in (REPO / top).rglob("*.py"))


def test_no_import_runs_up_a_layer_or_across_methods() -> None:
    assert wrong_imports(code_files()) == []


def test_every_method_has_its_folder_and_every_file_a_layer() -> None:
    for method in METHODS:
        assert (REPO / "retrieval" / method / "strategy.py").is_file()
    layers = {layer_of_file(p).split(":")[0] for p in code_files()}
    assert layers == set(RANK)


@pytest.mark.parametrize(
    ("source", "own", "expected"),
    [
        ("from engramdb.retrieval.results import AskResult\n", "ingestion", 1),
        ("def f():\n    from engramdb.platform.interfaces.memory import Memory\n", "ingestion", 1),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from engramdb.retrieval import x\n", "ingestion", 0),
        ("from engramdb.platform.graph import Graph\n", "ingestion", 0),
        ("from engramdb.retrieval.diffusion.walk import walk\n", "method:chain", 1),
        ("def f():\n    from engramdb.retrieval import hypergraph\n", "method:cluster", 1),
        ("from engramdb.retrieval.chain.search import ChainSearch\n", "method:chain", 0),
        ("from engramdb.retrieval.hop_retrieval import x\n", "method:chain", 0),
        ("from engramdb.retrieval.chain.strategy import ChainStrategy\n", "retrieval", 1),
        ("from engramdb.retrieval.eval.harness import run\n", "method:diffusion", 1),
    ],
)  # fmt: skip
def test_the_checker_sees_wrong_imports_lazy_ones_included(source: str, own: str, expected: int) -> None:
    assert len(wrong_imports_in(source, own, "probe.py")) == expected


def test_a_planted_method_to_method_import_is_named() -> None:
    planted = REPO / "retrieval" / "chain" / "planted_probe.py"  # never written: checked as if it were
    source = '"""Probe."""\n\nfrom engramdb.retrieval.hypergraph.memory import MemoryPoint\n'
    (problem,) = wrong_imports_in(source, layer_of_file(planted), "retrieval/chain/planted_probe.py")
    assert problem.startswith("retrieval/chain/planted_probe.py:3 (method:chain)")
    assert "engramdb.retrieval.hypergraph.memory" in problem and "another method" in problem

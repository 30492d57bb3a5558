"""Whether a process still runs: the one question several owners of shared state ask.

A server record, a vector-store lock and a document claim all name a process by
its pid; a record whose process is gone must not block anyone. A zombie (killed,
not yet reaped by its parent) counts as gone: it will never write again.
"""

from __future__ import annotations

import os
from pathlib import Path


def pid_alive(pid: int) -> bool:
    """Whether a process with ``pid`` exists and is not a zombie (signal 0 sends nothing)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, but another user's: not one of ours
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):  # no /proc (macOS): kill(0) is all we can know
        return True

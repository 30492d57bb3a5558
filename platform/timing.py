"""How long a piece of work took, for work handed to another thread.

Why: an ask (retrieval) and an ingest (ingestion) both hand waits on Neo4j to a worker thread
while their own thread embeds; the time of that work is reported with the other steps', so
the worker returns it beside the result. One helper, below both layers.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def timed(function: Callable[..., T], *args: Any) -> tuple[T, float]:
    """``function(*args)`` and the seconds it took."""
    t0 = time.perf_counter()
    return function(*args), time.perf_counter() - t0

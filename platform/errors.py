"""Exceptions with messages a user can act on.

Every error engramdb raises on purpose derives from :class:`EngramError`, so the
CLI can print its message alone (no traceback) and exit non-zero. A store that
goes away mid-run (Neo4j stopped, network lost) surfaces as the driver's own
exceptions, raised from deep inside a transaction; :func:`unreachable_store`
recognises them so the CLI can report them the same way.
"""

from __future__ import annotations

import sys
from typing import Literal

Store = Literal["neo4j", "vectors"]
#: How far down an exception's cause/context chain to look for a lost connection.
MAX_CHAIN_DEPTH = 8


class EngramError(Exception):
    """Base class: the message says what is wrong and how to fix it."""


class ConfigError(EngramError):
    """A setting is missing or malformed."""


class Neo4jServerError(EngramError):
    """The local Neo4j server could not be installed, started or stopped."""


class InputError(EngramError, ValueError):
    """Bad user input (a file, a document, a question, a budget).

    Also a ``ValueError``, so code written for other libraries (a LangChain app catching
    ``ValueError`` around a retriever) handles it without knowing engramdb's errors."""


class LLMError(EngramError):
    """The language model could not be reached, or kept failing after retries."""


def unreachable_store(exc: BaseException) -> Store | None:
    """Which store ``exc`` says cannot be reached: ``"neo4j"``, ``"vectors"`` or None.

    Looks at the exception and what caused it, because engramdb wraps some of
    these (a failed first connection becomes an EngramError whose cause is the
    driver's ServiceUnavailable) and the driver chains them (a refused socket
    under a retried transaction).
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(seen) < MAX_CHAIN_DEPTH:
        seen.add(id(current))
        if isinstance(current, _neo4j_connection_errors()):
            return "neo4j"
        if isinstance(current, _vector_connection_errors()):
            return "vectors"
        current = current.__cause__ or current.__context__
    return None


def _neo4j_connection_errors() -> tuple[type[BaseException], ...]:
    """Driver errors that mean "the server is gone", not "the query is wrong"."""
    from neo4j.exceptions import ConnectionPoolError, DatabaseUnavailable, ServiceUnavailable, SessionExpired

    return (ServiceUnavailable, SessionExpired, ConnectionPoolError, DatabaseUnavailable)


def _vector_connection_errors() -> tuple[type[BaseException], ...]:
    """The Qdrant server client's "no usable response" error (it wraps the transport error).

    Empty unless that client was ever loaded: an error cannot come from a library this
    process never imported, and importing it is slow. Bare transport errors (httpx) are
    not matched, since LLM and embedding API clients raise them too.
    """
    qdrant = sys.modules.get("qdrant_client.http.exceptions")
    return (qdrant.ResponseHandlingException,) if qdrant is not None else ()

"""Exceptions with messages a user can act on.

Every error engramdb raises on purpose derives from :class:`EngramError`, so the
CLI can print its message alone (no traceback) and exit non-zero.
"""

from __future__ import annotations


class EngramError(Exception):
    """Base class: the message says what is wrong and how to fix it."""


class ConfigError(EngramError):
    """A setting is missing or malformed."""


class Neo4jServerError(EngramError):
    """The local Neo4j server could not be installed, started or stopped."""


class InputError(EngramError):
    """Bad user input (a file, a document, a question)."""

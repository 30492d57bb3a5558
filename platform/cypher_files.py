"""Load the Cypher that engramdb runs from the ``cypher/`` folder.

Every query lives in a ``.cypher`` file so analysts can read exactly what runs.
A query is named by its path below ``cypher/`` without the suffix, e.g.
``writers/upsert_documents``. Files under ``schema/`` may hold several
statements separated by ``;``.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

CYPHER_DIR = Path(__file__).resolve().parent.parent / "cypher"
_LINE_COMMENT = re.compile(r"^\s*//.*$", re.MULTILINE)


@cache
def query(name: str) -> str:
    """The text of one query; a clear error if the file is missing."""
    path = CYPHER_DIR / f"{name}.cypher"
    if not path.is_file():
        raise FileNotFoundError(f"no Cypher file {name!r} (looked for {path})")
    text = _LINE_COMMENT.sub("", path.read_text()).strip()
    return text.rstrip(";").strip()


def statements(name: str) -> list[str]:
    """The statements of a multi-statement file (schema files)."""
    path = CYPHER_DIR / f"{name}.cypher"
    text = _LINE_COMMENT.sub("", path.read_text())
    return [s.strip() for s in text.split(";") if s.strip()]


def names(folder: str) -> list[str]:
    """All query names in one folder, sorted."""
    return sorted(f"{folder}/{p.stem}" for p in (CYPHER_DIR / folder).glob("*.cypher"))

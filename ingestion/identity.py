"""Which stored document a file is: two files never share an id, one file keeps its id.

Why: ids used to be a file's base name, so ``other/lund.md`` silently replaced
a different ``lund.md`` ingested from another folder. Now a file's id is its
path below the folder given (``notes/lund.md``), and every file document
remembers its absolute path. On ingest, each file is matched against memory:

1. a document with the same absolute path is this file, whatever its id
   (ingested from another working directory, or as part of a folder);
2. a document holding the wanted id but another path is another file, unless
   that file no longer exists (the folder was moved): then it is taken over;
   otherwise this file gets the id with a short hash of its path appended;
3. a document made before paths were stored (no path) is this file when its
   ``source`` is this file's path as given now, or when it has the same content
   and file name: memories built with base-name ids keep their documents, and
   get their path stored (migrated in place), with no duplicate and none lost.

The logic here is pure (lookups are passed in), so it is tested without a graph.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class StoredDocument:
    id: str
    path: str | None
    source: str
    content_hash: str | None


@dataclass(frozen=True)
class FileIdentity:
    """What ingest knows of one file: the id it would get, where it is, what it holds."""

    wanted_id: str
    path: str
    source: str
    content_hash: str | None = None


@dataclass(frozen=True)
class Resolution:
    """The id a file's document gets; ``store_path`` when the stored node must learn its path."""

    id: str
    store_path: bool = False
    note: str | None = None


def disambiguated(wanted_id: str, path: str) -> str:
    """A second file wanting a taken id: the id plus a short, stable hash of its absolute path."""
    return f"{wanted_id}~{hashlib.sha256(path.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


def resolve(
    files: Sequence[FileIdentity],
    by_path: dict[str, StoredDocument],
    by_id: dict[str, StoredDocument],
    legacy: Sequence[StoredDocument],
    exists: Callable[[str], bool] = os.path.exists,
) -> list[Resolution]:
    """The id of each file's document (see the module docstring for the rules)."""
    taken: set[str] = set()
    out: list[Resolution] = []
    unclaimed = list(legacy)
    for f in files:
        res = _resolve_one(f, by_path, by_id, unclaimed, exists, taken)
        taken.add(res.id)
        out.append(res)
    return out


def _resolve_one(
    f: FileIdentity,
    by_path: dict[str, StoredDocument],
    by_id: dict[str, StoredDocument],
    legacy: list[StoredDocument],
    exists: Callable[[str], bool],
    taken: set[str],
) -> Resolution:
    known = by_path.get(f.path)
    if known is not None:
        return Resolution(known.id)
    if f.wanted_id in taken:  # two files of this ingest want one id (not from one folder's scan)
        new_id = disambiguated(f.wanted_id, f.path)
        return Resolution(
            new_id, note=f"{f.wanted_id!r} names another file of this ingest: {f.source} is {new_id!r}"
        )
    holder = by_id.get(f.wanted_id)
    if holder is not None:
        if holder.path is None:
            if _same_legacy_file(holder, f, exists):
                return Resolution(holder.id, store_path=True)
        elif not exists(holder.path):
            return Resolution(
                holder.id, store_path=True, note=f"{holder.path} is gone: {f.path} takes its id"
            )
        new_id = disambiguated(f.wanted_id, f.path)
        where = holder.path or holder.source
        return Resolution(new_id, note=f"{f.wanted_id!r} already names {where}: {f.source} is {new_id!r}")
    for i, old in enumerate(legacy):
        if old.id not in taken and _same_legacy_file(old, f, exists):
            del legacy[i]
            return Resolution(old.id, store_path=True)
    return Resolution(f.wanted_id)


def _same_legacy_file(old: StoredDocument, f: FileIdentity, exists: Callable[[str], bool]) -> bool:
    """A document stored without a path is this file when its source is this file (as given now,
    or resolving to the same place), or when it holds the same content under the same file name
    and its source does not point at another existing file."""
    if old.source == f.source or _resolved(old.source) == f.path:
        return True
    if Path(old.source).name != Path(f.path).name:
        return False
    other = _resolved(old.source)
    if other is not None and other != f.path and exists(other):
        return False
    return old.content_hash is not None and old.content_hash == f.content_hash


def _resolved(source: str) -> str | None:
    try:
        return str(Path(source).resolve()) if source else None
    except (OSError, RuntimeError, ValueError):
        return None

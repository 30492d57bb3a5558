"""Read documents from paths: .txt/.md files, folders, JSON corpora, stdin.

JSON corpora are lists of objects with ``text`` and optional ``title``, ``id``,
``source`` and ``metadata`` (the ``[{title, text}]`` format of the benchmark
data). Files get their path (relative to the folder given) as document id, so
editing a file and ingesting it again replaces its memory.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from engramdb.ingestion.documents import Document, make_document
from engramdb.platform.errors import InputError

TEXT_SUFFIXES = {".txt", ".md", ".markdown"}


def load_path(path: str | Path, stdin: TextIO | None = None) -> list[Document]:
    """All documents at ``path`` (``-`` reads stdin: a JSON corpus or plain text)."""
    if str(path) == "-":
        return load_text_or_json((stdin or sys.stdin).read(), source="stdin")
    p = Path(path)
    if not p.exists():
        raise InputError(f"no such file or folder: {p}")
    if p.is_dir():
        files = sorted(
            f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in TEXT_SUFFIXES | {".json"}
        )
        if not files:
            raise InputError(f"folder {p} has no .txt, .md or .json files")
        docs: list[Document] = []
        for f in files:
            docs.extend(_load_file(f, f.relative_to(p).as_posix()))
        return _check_unique(docs)
    return _check_unique(_load_file(p, p.name))


def _load_file(path: Path, doc_id: str) -> list[Document]:
    suffix = path.suffix.lower()
    try:
        raw = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    if suffix == ".json":
        return load_json_corpus(raw, source=str(path))
    if suffix in TEXT_SUFFIXES:
        if not raw.strip():
            raise InputError(f"{path} is empty")
        return [make_document(raw, title=_title_of(raw, path), id=doc_id, source=str(path))]
    raise InputError(
        f"unsupported file type {suffix or '(none)'} for {path}: use .txt, .md or a .json corpus"
    )


def _title_of(text: str, path: Path) -> str:
    first = text.lstrip().splitlines()[0].strip() if text.strip() else ""
    if first.startswith("#"):
        return first.lstrip("#").strip()
    return path.stem.replace("_", " ").replace("-", " ")


def load_text_or_json(raw: str, source: str) -> list[Document]:
    stripped = raw.lstrip()
    if stripped.startswith("[") or stripped.startswith("{"):
        return load_json_corpus(raw, source=source)
    if not stripped:
        raise InputError(f"{source}: no text given")
    return [make_document(raw, source=source)]


def load_json_corpus(raw: str, source: str) -> list[Document]:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{source}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from exc
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise InputError(f"{source}: a JSON corpus must be a list of {{title, text}} objects")
    return _check_unique([_from_item(item, i, source) for i, item in enumerate(data)])


def _from_item(item: Any, index: int, source: str) -> Document:
    where = f"{source} item {index}"
    if not isinstance(item, dict):
        raise InputError(f"{where}: expected an object with 'text', got {type(item).__name__}")
    text = item.get("text")
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{where}: missing or empty 'text'")
    title = item.get("title")
    if title is not None and not isinstance(title, str):
        raise InputError(f"{where}: 'title' must be a string")
    metadata = item.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise InputError(f"{where}: 'metadata' must be an object")
    doc_id = item.get("id")
    try:
        return make_document(
            text, title=title, id=None if doc_id is None else str(doc_id), source=str(item.get("source") or source),
            metadata=metadata,
        )  # fmt: skip
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from exc


def _check_unique(docs: list[Document]) -> list[Document]:
    """Identical passages collapse to one; two different texts under one id are an error."""
    seen: dict[str, Document] = {}
    out: list[Document] = []
    for doc in docs:
        prior = seen.get(doc.id)
        if prior is None:
            seen[doc.id] = doc
            out.append(doc)
        elif prior.content_hash != doc.content_hash:
            raise InputError(
                f"two different documents share the id {doc.id!r} ({prior.source}, {doc.source})"
            )
    return out


def iter_batches(docs: list[Document], size: int) -> Iterator[list[Document]]:
    for start in range(0, len(docs), size):
        yield docs[start : start + size]

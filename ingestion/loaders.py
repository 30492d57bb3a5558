"""Read documents from paths: text, Markdown, PDF/HTML/DOCX/PPTX files, folders, JSON corpora, stdin.

JSON corpora are lists of objects with ``text`` and optional ``title``, ``id``,
``source`` and ``metadata`` (the ``[{title, text}]`` format of the benchmark
data). A file's document id is its path below the folder given, led by that
folder's name (``notes/sub/lund.md``), or the path as given for a file named
directly; the document also remembers the file's absolute path, which is how a
later ingest recognises it whatever id it was first given (see
``ingestion/identity.py``). Two files therefore never share an id.

A folder is read file by file: a file that cannot be read becomes a *failed*
entry with its reason and an unsupported one a *skipped* entry, and the rest
are ingested. A file named directly must be readable and of a supported type
(``as_text`` reads any file as plain text).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from engramdb.ingestion.converters import CONVERTED_SUFFIXES
from engramdb.ingestion.documents import Document, make_document
from engramdb.platform.errors import InputError

TEXT_SUFFIXES = frozenset({".txt", ".text"})
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})
JSON_SUFFIXES = frozenset({".json"})
#: PDF, HTML, DOCX and PPTX are converted to Markdown (the ``engramdb[documents]`` extra).
SUPPORTED_SUFFIXES = TEXT_SUFFIXES | MARKDOWN_SUFFIXES | JSON_SUFFIXES | CONVERTED_SUFFIXES
#: Titles made from a text's first line are clipped here (a stdin document has no file name).
TITLE_CHARS = 80


def supported_types() -> str:
    return ", ".join(sorted(SUPPORTED_SUFFIXES))


@dataclass(frozen=True)
class FileProblem:
    """A file of a folder that was not read: ``doc_id`` is the id its document would have had."""

    path: str
    reason: str
    doc_id: str = ""
    abs_path: str = ""


@dataclass
class LoadResult:
    """What a path held: the documents read, the files that failed, the files skipped."""

    documents: list[Document] = field(default_factory=list)
    failed: list[FileProblem] = field(default_factory=list)
    skipped: list[FileProblem] = field(default_factory=list)

    def raise_problems(self) -> None:
        """All-or-nothing callers (``--strict``, ``load_path``): every bad file in one error."""
        if not self.failed:
            return
        listed = "; ".join(f"{p.path}: {p.reason}" for p in self.failed[:20])
        more = f"; and {len(self.failed) - 20} more" if len(self.failed) > 20 else ""
        noun = "file" if len(self.failed) == 1 else "files"
        raise InputError(f"{len(self.failed)} {noun} could not be read, nothing was ingested: {listed}{more}")


def load_path(path: str | Path, stdin: TextIO | BinaryIO | None = None) -> list[Document]:
    """All documents at ``path``, or an error naming every file that could not be read."""
    result = scan_path(path, stdin=stdin)
    result.raise_problems()
    return result.documents


def scan_path(
    path: str | Path,
    *,
    stdin: TextIO | BinaryIO | None = None,
    as_text: bool = False,
    title: str | None = None,
    doc_id: str | None = None,
) -> LoadResult:
    """Read ``path`` (``-`` is stdin: a JSON corpus or a text). A folder never raises for one bad
    file; a file named directly (or stdin) raises :class:`InputError` when it cannot be read.
    ``title`` and ``doc_id`` name a single document (stdin or one file)."""
    if str(path) == "-":
        raw = read_stdin(stdin)
        docs = load_text_or_json(raw, source="stdin", title=title, doc_id=doc_id)
        return LoadResult(documents=docs)
    p = Path(path)
    if not p.exists():
        raise InputError(f"no such file or folder: {shown(p)}")
    if p.is_dir():
        if title is not None or doc_id is not None:
            raise InputError("--title and --id name one document: give a file or -, not a folder")
        return _scan_folder(p, as_text)
    return LoadResult(documents=_load_file(p, doc_id or file_id(p), as_text=as_text, title=title))


def read_stdin(stdin: TextIO | BinaryIO | None = None) -> str:
    """Standard input as text; bytes that are not UTF-8 are an error naming where they are."""
    stream: Any = stdin if stdin is not None else sys.stdin
    data = stream.buffer.read() if hasattr(stream, "buffer") else stream.read()
    if isinstance(data, bytes):
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(
                f"stdin is not UTF-8 text ({exc.reason}: byte 0x{data[exc.start]:02x} at position {exc.start})"
            ) from exc
    return data


def shown(path: Path | str) -> str:
    """A path as a message or an id can hold it: bytes that are not UTF-8 appear as ``\\xff``."""
    return os.fsencode(str(path)).decode("utf-8", "backslashreplace")


def file_id(path: Path) -> str:
    """The id of a file named directly: its path as given, normalised (``./a//b.md`` -> ``a/b.md``)."""
    return shown(Path(os.path.normpath(path)).as_posix())


def folder_id(folder: Path, file: Path) -> str:
    """The id of a file found in ``folder``: the folder's own name, then the path below it."""
    name = folder.resolve().name
    rel = file.relative_to(folder).as_posix()
    return shown(f"{name}/{rel}" if name else rel)


def _scan_folder(folder: Path, as_text: bool) -> LoadResult:
    result = LoadResult()
    seen: dict[str, Document] = {}  # ids of the documents read so far, across files
    for f in _walk(folder):
        shown_path = shown(f)
        suffix = f.suffix.lower()
        if suffix not in SUPPORTED_SUFFIXES and not as_text:
            result.skipped.append(FileProblem(shown_path, f"unsupported type {suffix or '(no extension)'}"))
            continue
        doc_id = folder_id(folder, f)
        try:
            result.documents.extend(_check_unique(_load_file(f, doc_id, as_text=as_text), seen))
        except InputError as exc:
            reason = str(exc).removeprefix(f"{shown_path}: ").removeprefix(f"{shown_path} ")
            result.failed.append(FileProblem(shown_path, reason, doc_id, shown(f.resolve())))
    if not result.documents and not result.failed and not result.skipped:
        raise InputError(f"folder {shown(folder)} holds no files")
    return result


def _walk(folder: Path) -> Iterator[Path]:
    """Files below ``folder`` in a stable order; hidden files and folders (``.git``) are not documents."""
    for root, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.startswith("."):
                yield Path(root) / name


def _load_file(path: Path, doc_id: str, *, as_text: bool = False, title: str | None = None) -> list[Document]:
    suffix = path.suffix.lower()
    where = shown(path)
    if not as_text and suffix not in SUPPORTED_SUFFIXES:
        raise InputError(
            f"{where}: unsupported file type {suffix or '(no extension)'}; supported: {supported_types()} "
            "(--as-text reads it as plain text)"
        )
    if path.stat().st_size == 0:
        raise InputError(f"{where} is empty")
    abs_path = shown(path.resolve())
    if not as_text and suffix in CONVERTED_SUFFIXES:
        from engramdb.ingestion.converters import convert_file

        converted = convert_file(path)
        return [_markdown_document(converted.markdown, path, doc_id, abs_path, title or converted.title)]
    raw = _read_text(path)
    if not as_text and suffix in JSON_SUFFIXES:
        return load_json_corpus(raw, source=where)
    if not raw.strip():
        raise InputError(f"{where} holds only whitespace")
    if not as_text and suffix in MARKDOWN_SUFFIXES:
        return [_markdown_document(raw, path, doc_id, abs_path, title)]
    return [make_document(raw, title=title or _title_of(raw, path), id=doc_id, source=where, path=abs_path)]


def _read_text(path: Path) -> str:
    """The file as text: binary data (a NUL byte) and bytes that are not UTF-8 are named as such."""
    data = path.read_bytes()
    nul = data.find(b"\x00")
    if nul >= 0:
        raise InputError(
            f"{shown(path)} contains a NUL byte at byte {nul}: it looks like binary data, not text"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{shown(path)} is not UTF-8 text ({exc.reason}: byte 0x{data[exc.start]:02x} at byte {exc.start})"
        ) from exc


def _markdown_document(raw: str, path: Path, doc_id: str, abs_path: str, title: str | None) -> Document:
    from engramdb.ingestion.markdown import parse_markdown

    where = shown(path)
    parsed = parse_markdown(raw, source=where)
    if not parsed.sections:
        raise InputError(f"{where} has no text besides its headings and front matter")
    return make_document(
        parsed.text, title=title or parsed.title or _stem_title(path), id=doc_id, source=where,
        metadata=parsed.metadata, sections=parsed.sections, path=abs_path,
    )  # fmt: skip


def _title_of(text: str, path: Path | None) -> str:
    """A title for a text without one: its Markdown-style first heading, else the file name,
    else (stdin) its first line, clipped."""
    first = text.lstrip().splitlines()[0].strip() if text.strip() else ""
    if first.startswith("#"):
        return first.lstrip("#").strip()[:TITLE_CHARS]
    if path is not None:
        return _stem_title(path)
    if len(first) <= TITLE_CHARS:
        return first
    cut = first.rfind(" ", 0, TITLE_CHARS)
    return first[: cut if cut > TITLE_CHARS // 2 else TITLE_CHARS].rstrip(" ,;:") + "…"


def _stem_title(path: Path) -> str:
    return shown(path.stem).replace("_", " ").replace("-", " ")


def load_text_or_json(
    raw: str, source: str, title: str | None = None, doc_id: str | None = None
) -> list[Document]:
    """A JSON corpus, or one text (titled by ``title``, else its first line)."""
    stripped = raw.lstrip()
    if (stripped.startswith("[") or stripped.startswith("{")) and title is None and doc_id is None:
        return load_json_corpus(raw, source=source)
    if not stripped:
        raise InputError(f"{source}: no text given")
    return [make_document(raw, title=title or _title_of(raw, None), id=doc_id, source=source)]


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
    if text is None or (isinstance(text, str) and not text.strip()):
        raise InputError(f"{where}: missing or empty 'text'")
    if not isinstance(text, str):
        raise InputError(f"{where}: 'text' must be a string, got {_json_type(text)}")
    title = item.get("title")
    if title is not None and not isinstance(title, str):
        raise InputError(f"{where}: 'title' must be a string, got {_json_type(title)}")
    metadata = item.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise InputError(f"{where}: 'metadata' must be an object, got {_json_type(metadata)}")
    doc_id = item.get("id")
    try:
        return make_document(
            text, title=title, id=None if doc_id is None else str(doc_id), source=str(item.get("source") or source),
            metadata=metadata,
        )  # fmt: skip
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from exc


def _json_type(value: Any) -> str:
    """The JSON name of a value's type, as the user wrote it ("a number", not "int")."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "null" if value is None else type(value).__name__


def _check_unique(docs: list[Document], seen: dict[str, Document] | None = None) -> list[Document]:
    """Identical passages collapse to one; two different texts under one id are an error.

    ``seen`` holds documents accepted before (the earlier files of a folder): ``docs`` are checked
    against them too, and added to it only when none of them is refused."""
    known = seen if seen is not None else {}
    fresh: dict[str, Document] = {}
    out: list[Document] = []
    for doc in docs:
        prior = fresh.get(doc.id) or known.get(doc.id)
        if prior is None:
            fresh[doc.id] = doc
            out.append(doc)
        elif prior.content_hash != doc.content_hash:
            raise InputError(
                f"two different documents share the id {doc.id!r} ({prior.source}, {doc.source})"
            )
    known.update(fresh)
    return out


def iter_batches(docs: list[Document], size: int) -> Iterator[list[Document]]:
    for start in range(0, len(docs), size):
        yield docs[start : start + size]

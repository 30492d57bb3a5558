"""Documents and chunks: stable ids, content hashes, sentence-boundary chunking.

A document's id is the caller's (or the file path's) when given, else derived
from its content hash, so re-ingesting the same text is recognised. Short
Wikipedia-style passages stay whole; long texts are split on sentence
boundaries into chunks of at most ``max_chars`` characters. A document with
sections (Markdown headings) is chunked section by section: a chunk does not
run past a top-level section once it is long enough to stand alone, and its
title says where it sits (``document title › section``).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from engramdb.ingestion.markdown import Section
from engramdb.platform.errors import InputError
from engramdb.platform.text_safety import require_unicode, unicode_problem

DEFAULT_MAX_CHARS = 2400
#: A top-level section at least this long is a chunk border; shorter ones join their neighbours.
MIN_SECTION_CHARS = DEFAULT_MAX_CHARS // 4
#: Between a document title and its section in a chunk's title.
SECTION_SEPARATOR = " › "
#: Above this share of control characters (other than ordinary whitespace) a "text" is binary or garbage.
MAX_CONTROL_SHARE = 0.05
_ORDINARY_WHITESPACE = " \n\t\r\f\v"
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")  # Unicode Cc minus the whitespace above
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
#: A piece ending like this stops inside a name: a capital initial ("J.") or a title before a name.
_ENDS_IN_NAME_PART = re.compile(
    r"(?:^|[\s(\"'])(?:[A-Z]|Mr|Mrs|Ms|Dr|Prof|St|Mt|Gen|Col|Capt|Lt|Sgt|Rev|Fr|Sr)\.$"
)
_ID_PATTERN = re.compile(r"^[^\s].{0,499}$", re.DOTALL)


@dataclass(frozen=True)
class Chunk:
    id: str
    doc_id: str
    position: int
    text: str
    content_hash: str
    title: str = ""  # the document's title, with the section for a document with sections


@dataclass(frozen=True)
class Document:
    """One document to remember. Build with :func:`make_document`."""

    id: str
    title: str
    text: str
    source: str
    content_hash: str
    metadata: dict[str, Any] = field(default_factory=dict)
    sections: tuple[Section, ...] = ()
    #: The file it was read from (absolute), when it is one file's document: how a re-ingest finds it.
    path: str = ""

    @property
    def metadata_json(self) -> str:
        return json.dumps(self.metadata, sort_keys=True, default=str)

    def chunks(self, max_chars: int = DEFAULT_MAX_CHARS) -> list[Chunk]:
        if not self.sections:
            pieces = [("", part) for part in split_text(self.text, max_chars)]
        else:
            pieces = split_sections(self.sections, max_chars)
        return [
            Chunk(id=f"{self.id}#{i}", doc_id=self.id, position=i, text=part, content_hash=sha256(part),
                  title=SECTION_SEPARATOR.join(p for p in (self.title, label) if p))
            for i, (label, part) in enumerate(pieces)
        ]  # fmt: skip


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def make_document(
    text: str,
    *,
    title: str | None = None,
    id: str | None = None,
    source: str = "",
    metadata: dict[str, Any] | None = None,
    sections: tuple[Section, ...] = (),
    path: str = "",
) -> Document:
    """Validate input and compute the stable id and content hash.

    With ``sections``, ``text`` is their text (headings left out) and the headings count in
    the content hash, so renaming a heading is a change."""
    if not isinstance(text, str):
        raise InputError(f"document text must be a string, got {type(text).__name__}")
    name = _describe(id, title, source)
    if not text.strip():
        raise InputError(f"{name} has empty text")
    check_text(text, name)
    title = (title or "").strip()
    if title:
        check_text(title, f"the title of {name}")
    content_hash = sha256(f"{title}\n{text}")
    if sections:
        content_hash = sha256(f"{title}\n{text}\n{json.dumps([list(s.path) for s in sections])}")
    metadata = dict(metadata or {})
    check_text(json.dumps(metadata, default=str, ensure_ascii=False), f"the metadata of {name}")
    if id is not None:
        id = str(id).strip()
        if unicode_problem(id, "id") or not _ID_PATTERN.match(id):
            raise InputError(
                f"invalid document id {id!r}: it must be 1-500 characters and not start with a space"
            )
    doc_id = id or f"doc-{content_hash[:20]}"
    return Document(
        id=doc_id,
        title=title,
        text=text,
        source=source,
        content_hash=content_hash,
        metadata=metadata,
        sections=tuple(sections),
        path=path,
    )


def _describe(id: str | None, title: str | None, source: str) -> str:
    """How an error names a document: its id (else its title), and where it came from."""
    label = f"document {str(id)!r}" if id is not None else f"document {title!r}" if title else "document"
    return f"{label} from {source}" if source else label


def check_text(text: str, name: str) -> None:
    """Refuse what is not text: any NUL (binary data), or control characters making up more
    than :data:`MAX_CONTROL_SHARE` of the characters that are not ordinary whitespace. Ordinary
    whitespace (``\\n \\t \\r``, form feed, vertical tab) is fine, and so is a stray escape code.
    A lone surrogate (``"\\ud800"`` from a JSON escape, or undecodable bytes smuggled in by
    ``surrogateescape``) is not Unicode text at all: no store could encode it."""
    require_unicode(text, name)
    nul = text.find("\x00")
    if nul >= 0:
        raise InputError(
            f"{name} contains a NUL byte at character {nul}: it looks like binary data, not text"
        )
    control = len(_CONTROL.findall(text))
    visible = len(text) - sum(text.count(ch) for ch in _ORDINARY_WHITESPACE)
    if control and control > MAX_CONTROL_SHARE * visible:
        raise InputError(
            f"{name} is not text: {control} of its {visible} non-whitespace characters are control characters"
        )


def split_sentences(text: str) -> list[str]:
    """Cheap, deterministic sentence split (enough to keep chunk borders clean).

    A full stop after an initial or a title ("directed by D. Ross Lederman",
    "Dr. Watson") does not end a sentence: cutting there would split a name
    between two chunks and leave a grounding sentence that stops mid-name.
    """
    parts = [p.strip() for p in _SENTENCE_END.split(text.strip())]
    out: list[str] = []
    for part in (p for p in parts if p):
        if out and _ENDS_IN_NAME_PART.search(out[-1]):
            out[-1] = f"{out[-1]} {part}"
        else:
            out.append(part)
    return out


def split_text(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> list[str]:
    """Whole text if short; else sentence-aligned pieces of at most ``max_chars``."""
    text = text.strip()
    if len(text) <= max_chars:
        return [text]
    pieces: list[str] = []
    current = ""
    for paragraph in re.split(r"\n\s*\n", text):
        for sentence in split_sentences(paragraph):
            while len(sentence) > max_chars:  # a run-on "sentence": cut at a space
                cut = sentence.rfind(" ", 0, max_chars)
                cut = cut if cut > 0 else max_chars
                if current:
                    pieces.append(current)
                    current = ""
                pieces.append(sentence[:cut].strip())
                sentence = sentence[cut:].strip()
            candidate = f"{current} {sentence}".strip() if current else sentence
            if len(candidate) > max_chars and current:
                pieces.append(current)
                current = sentence
            else:
                current = candidate
        # paragraph breaks are natural borders when a chunk is already large
        if current and len(current) > max_chars // 2:
            pieces.append(current)
            current = ""
    if current:
        pieces.append(current)
    return pieces


def split_sections(
    sections: tuple[Section, ...], max_chars: int = DEFAULT_MAX_CHARS
) -> list[tuple[str, str]]:
    """(section label, text) chunks: sections packed in order up to ``max_chars``; a top-level
    section starts a new chunk when the text gathered so far can stand alone
    (:data:`MIN_SECTION_CHARS`); a chunk is labelled with the section it starts in."""
    out: list[tuple[str, str]] = []
    label = ""
    parts: list[str] = []
    size = 0
    for section in sections:
        if section.top and size >= MIN_SECTION_CHARS:
            out.append((label, "\n\n".join(parts)))
            parts, size = [], 0
        for piece in split_text(section.text, max_chars):
            if parts and size + 2 + len(piece) > max_chars:
                out.append((label, "\n\n".join(parts)))
                parts, size = [], 0
            if not parts:
                label = section.label
            parts.append(piece)
            size += len(piece) + 2
    if parts:
        out.append((label, "\n\n".join(parts)))
    return out

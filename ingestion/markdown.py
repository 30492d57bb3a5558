"""Markdown to sections of plain text: headings become section titles, never passage text.

Why: a heading left inside a passage is read as a sentence ("# Ingrid Halvorsen
... physicist") and even quoted as a QA pair's source sentence, and a chunk
that runs from one chapter into the next mixes two subjects. Parsing with
``markdown-it-py`` (already installed with ``rich``) rather than regexes gets
lists, tables, code and emphasis right; the passages keep only their words.
YAML front matter becomes document metadata (its ``title`` the title).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from engramdb.platform.errors import InputError

_FRONT_MATTER = re.compile(
    r"\A(?:\ufeff)?---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL
)
_TAG = re.compile(r"<[^>]*>")
_SPACES = re.compile(r"[ \t]+")


@dataclass(frozen=True)
class Section:
    """One heading's own text (not its subsections'). ``path`` is the heading and its parents,
    outermost first, below the document title; ``top`` marks a section at the highest level
    the document uses, the borders a chunk does not cross once it is long enough."""

    path: tuple[str, ...]
    text: str
    top: bool = False

    @property
    def label(self) -> str:
        return self.path[-1] if self.path else ""


@dataclass(frozen=True)
class ParsedMarkdown:
    title: str | None
    sections: tuple[Section, ...]
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The passage text: every section's words, headings left out."""
        return "\n\n".join(s.text for s in self.sections if s.text)

    @property
    def headings(self) -> list[list[str]]:
        return [list(s.path) for s in self.sections]


def parse_markdown(raw: str, source: str = "") -> ParsedMarkdown:
    """Split ``raw`` Markdown into sections of plain text, with front matter and title."""
    metadata, body = _front_matter(raw, source)
    blocks = _blocks(body)
    title = metadata.get("title") if isinstance(metadata.get("title"), str) else None
    h1s = [b for b in blocks if b[0] == "heading" and b[1] == 1]
    if blocks and blocks[0][0] == "heading" and blocks[0][1] == 1 and len(h1s) == 1:
        title = title or blocks[0][2]
        blocks = blocks[1:]  # the document's own title, not a section
    levels = [level for kind, level, _ in blocks if kind == "heading"]
    top = min(levels) if levels else 0
    sections: list[Section] = []
    path: list[tuple[int, str]] = []
    current: list[str] = []

    def close() -> None:
        text = "\n\n".join(current).strip()
        if text or path:
            is_top = bool(path) and path[-1][0] == top
            sections.append(Section(tuple(name for _, name in path), text, is_top or not sections))
        current.clear()

    for kind, level, text in blocks:
        if kind == "heading":
            if current or path:
                close()
            while path and path[-1][0] >= level:
                path.pop()
            path.append((level, text))
        else:
            current.append(text)
    close()
    return ParsedMarkdown(title=title, sections=_drop_empty(sections), metadata=metadata)


def _drop_empty(sections: list[Section]) -> tuple[Section, ...]:
    """Headings without text of their own go; a top-level one hands its border to the next section."""
    kept: list[Section] = []
    carry = False
    for s in sections:
        if not s.text:
            carry = carry or s.top
            continue
        kept.append(Section(s.path, s.text, s.top or carry))
        carry = False
    return tuple(kept)


def _front_matter(raw: str, source: str) -> tuple[dict[str, Any], str]:
    match = _FRONT_MATTER.match(raw)
    if not match:
        return {}, raw
    import yaml

    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        raise InputError(f"{source or 'document'}: invalid YAML front matter{where}") from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputError(f"{source or 'document'}: front matter must be a YAML mapping of keys to values")
    return {str(k): v for k, v in data.items()}, raw[match.end() :]


def _blocks(body: str) -> list[tuple[str, int, str]]:
    """(kind, heading level, plain text) of each block: headings, paragraphs, list items, table rows, code."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(body)
    out: list[tuple[str, int, str]] = []
    row: list[str] = []
    header: list[str] = []
    in_head = False
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type == "heading_open":
            text = _inline(tokens[i + 1])
            if text:
                out.append(("heading", int(tok.tag[1]), text))
            i += 3
            continue
        if tok.type == "inline" and tokens[i - 1].type == "paragraph_open":
            text = _inline(tok)
            if text:
                out.append(("text", 0, text))
        elif tok.type in ("fence", "code_block"):
            text = tok.content.strip()
            if text:
                out.append(("text", 0, text))
        elif tok.type == "html_block":
            text = _SPACES.sub(" ", _TAG.sub(" ", tok.content)).strip()
            if text and not tok.content.lstrip().startswith("<!--"):
                out.append(("text", 0, text))
        elif tok.type == "thead_open":
            in_head = True
        elif tok.type == "thead_close":
            in_head = False
        elif tok.type == "tr_open":
            row = []
        elif tok.type in ("th_open", "td_open"):
            row.append(_inline(tokens[i + 1]))
        elif tok.type == "tr_close":
            if in_head:
                header = row
            elif any(row):
                cells = [
                    f"{h}: {c}" if h else c for h, c in zip(header + [""] * len(row), row, strict=False) if c
                ]
                out.append(("text", 0, "; ".join(cells) + "."))
            row = []
        i += 1
    return out


def _inline(token: Any) -> str:
    """The words of an inline token: markup, link targets, images and raw HTML dropped."""
    parts: list[str] = []
    for child in token.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type == "softbreak":
            parts.append(" ")
        elif child.type == "hardbreak":
            parts.append("\n")
    return _SPACES.sub(" ", "".join(parts)).strip()

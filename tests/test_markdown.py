"""Markdown structure: headings become section titles, never passage text; front matter is metadata."""

from __future__ import annotations

from pathlib import Path

import pytest

from engramdb.ingestion.documents import MIN_SECTION_CHARS, make_document
from engramdb.ingestion.loaders import scan_path
from engramdb.ingestion.markdown import parse_markdown
from engramdb.platform.errors import InputError

NOTE = """---
title: Ingrid Halvorsen
tags: [physics, founders]
year: 1967
---
# Ingrid Halvorsen

Ingrid Halvorsen is a **Norwegian** physicist and [entrepreneur](https://example.org/x).

## Career
She founded *Lumora Instruments* in 2004.

- Lumora makes spectrometers.
- Lumora employs 40 people.

### Early years
She grew up in `Bergen`.

| Award | Year |
|---|---|
| Fram Prize | 2010 |

## Empty heading

## Later life
She retired in 2020. <!-- a comment -->
"""


def test_headings_are_section_paths_and_never_text() -> None:
    parsed = parse_markdown(NOTE)
    assert parsed.title == "Ingrid Halvorsen"
    assert parsed.metadata == {"title": "Ingrid Halvorsen", "tags": ["physics", "founders"], "year": 1967}
    paths = [s.path for s in parsed.sections]
    assert paths == [(), ("Career",), ("Career", "Early years"), ("Later life",)]
    assert "#" not in parsed.text and "Career" not in parsed.text and "**" not in parsed.text
    assert "Ingrid Halvorsen is a Norwegian physicist and entrepreneur." in parsed.text
    assert "https://" not in parsed.text and "comment" not in parsed.text
    assert "Lumora makes spectrometers." in parsed.text and "She grew up in Bergen." in parsed.text
    assert "Award: Fram Prize; Year: 2010." in parsed.text  # a table row keeps its header's words
    assert [s.top for s in parsed.sections] == [True, True, False, True]


def test_a_chunk_is_titled_document_and_section(tmp_path: Path) -> None:
    note = tmp_path / "notes" / "ingrid.md"
    note.parent.mkdir()
    note.write_text(NOTE)
    (doc,) = scan_path(tmp_path / "notes").documents
    assert doc.id == "notes/ingrid.md" and doc.title == "Ingrid Halvorsen"
    assert doc.metadata["tags"] == ["physics", "founders"]
    chunks = doc.chunks()
    assert len(chunks) == 1 and chunks[0].title == "Ingrid Halvorsen"  # short sections share one chunk
    assert not any(
        line.lstrip().startswith(("#", "-", "|", ">")) for c in chunks for line in c.text.splitlines()
    )


def test_chunks_do_not_cross_a_long_top_level_section() -> None:
    body = "The survey measured the inner basin. " * (MIN_SECTION_CHARS // 30)
    raw = (
        f"# Fjords\n\n## Halvorsen Fjord\n\n{body}\n\n## Lumora Fjord\n\n{body}\n\n### Depth\n\nShort note.\n"
    )
    parsed = parse_markdown(raw)
    doc = make_document(parsed.text, title=parsed.title, sections=parsed.sections)
    chunks = doc.chunks()
    assert [c.title for c in chunks] == ["Fjords › Halvorsen Fjord", "Fjords › Lumora Fjord"]
    assert chunks[1].text.endswith("Short note.")  # a subsection stays with its section


def test_short_top_level_sections_join_their_neighbours() -> None:
    raw = "## A\n\nOne.\n\n## B\n\nTwo.\n\n## C\n\nThree.\n"
    parsed = parse_markdown(raw)
    doc = make_document(parsed.text, title="T", sections=parsed.sections)
    (chunk,) = doc.chunks()
    assert chunk.text == "One.\n\nTwo.\n\nThree." and chunk.title == "T › A"


def test_renaming_a_heading_changes_the_content_hash() -> None:
    a, b = parse_markdown("## Early life\n\nText.\n"), parse_markdown("## Childhood\n\nText.\n")
    doc_a = make_document(a.text, title="T", sections=a.sections)
    doc_b = make_document(b.text, title="T", sections=b.sections)
    assert doc_a.text == doc_b.text and doc_a.content_hash != doc_b.content_hash


def test_bad_front_matter_is_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="invalid YAML front matter at line"):
        parse_markdown("---\ntitle: [unclosed\n---\nText.\n", source="x.md")
    with pytest.raises(InputError, match="front matter must be a YAML mapping"):
        parse_markdown("---\n- a\n- b\n---\nText.\n", source="x.md")
    only_headings = tmp_path / "h.md"
    only_headings.write_text("# Title\n\n## Section\n")
    with pytest.raises(InputError, match="no text besides its headings"):
        scan_path(only_headings)

"""PDF, HTML, DOCX and PPTX files to Markdown (engramdb.ingestion.converters).

Pure unit tests on the committed fixtures in tests/fixtures/documents (rebuilt by
make_documents.py there). They need the `documents` extra (part of `dev`), not Neo4j.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from engramdb.ingestion.converters import CONVERTED_SUFFIXES, ConvertedDocument, clean_markdown, convert_file
from engramdb.platform.errors import InputError

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "documents"
PDF_FACT = "The Lumora spectrometer plant opened in Tromsø in 2011."
HTML_FACT = "The survey team measured a maximum depth of 412 metres in the inner basin."
DOCX_FACT = "Ingrid Halvorsen founded Lumora Instruments in 2004."
HTML_BOILERPLATE = [
    "Home",
    "Products",
    "Careers",
    "Contact us",
    "Subscribe to our newsletter",
    "All rights reserved",
    "Copyright 2024",
    "Related links",
    "Coastal survey archive",
    "cookie",
    "Privacy policy",
    "Example Corp",
]


def _heading_lines(markdown: str) -> list[str]:
    return [line for line in markdown.splitlines() if line.startswith("#")]


def _assert_clean(markdown: str) -> None:
    """What every conversion promises: no images, comments, URLs or runs of blank lines."""
    assert "![" not in markdown
    assert "<!--" not in markdown
    assert "](" not in markdown
    assert "http" not in markdown
    assert "\n\n\n" not in markdown
    assert "\f" not in markdown
    assert markdown == markdown.strip()


def test_suffixes():
    assert CONVERTED_SUFFIXES == frozenset({".pdf", ".html", ".htm", ".docx", ".pptx"})


def test_pdf_text_from_both_pages_in_order():
    doc = convert_file(FIXTURES / "report.pdf")
    assert isinstance(doc, ConvertedDocument)
    assert PDF_FACT in doc.markdown
    assert "Lumora Instruments annual report" in doc.markdown
    assert doc.markdown.index("Lumora Instruments annual report") < doc.markdown.index(PDF_FACT)
    assert doc.markdown.index("optical spectrometers") < doc.markdown.index(PDF_FACT)
    # the page break became a paragraph break, and the fact opens its own paragraph
    assert re.search(r"\n\n" + re.escape(PDF_FACT), doc.markdown)
    assert "  " not in doc.markdown
    assert doc.title == "Lumora Instruments annual report"
    _assert_clean(doc.markdown)


def test_html_main_content_with_headings_and_no_boilerplate():
    doc = convert_file(FIXTURES / "page.html")
    assert HTML_FACT in doc.markdown
    assert "multibeam echo sounder" in doc.markdown
    assert "# Halvorsen Fjord Survey" in _heading_lines(doc.markdown)
    assert "## Findings" in _heading_lines(doc.markdown)
    lowered = doc.markdown.lower()
    for junk in HTML_BOILERPLATE:
        assert junk.lower() not in lowered, junk
    assert "dataLayer" not in doc.markdown and "font-family" not in doc.markdown
    assert doc.title == "Halvorsen Fjord Survey"
    # paragraphs stay separate paragraphs
    assert len([p for p in doc.markdown.split("\n\n") if p.strip()]) >= 6
    _assert_clean(doc.markdown)


def test_docx_headings_fact_and_title():
    doc = convert_file(FIXTURES / "notes.docx")
    headings = _heading_lines(doc.markdown)
    assert headings == ["# Project Notes", "# Background", "## Timeline"]
    assert DOCX_FACT in doc.markdown
    assert doc.markdown.index("## Timeline") < doc.markdown.index(DOCX_FACT)
    assert doc.title == "Project Notes"
    _assert_clean(doc.markdown)


def test_pptx_slide_titles_and_bullets():
    doc = convert_file(FIXTURES / "slides.pptx")
    assert _heading_lines(doc.markdown) == ["# Lumora roadmap", "# Research priorities"]
    assert "Open a second spectrometer plant in 2026." in doc.markdown
    assert "Halve the calibration time of the field instruments." in doc.markdown
    assert "Slide number" not in doc.markdown
    assert doc.title == "Lumora roadmap"
    _assert_clean(doc.markdown)


def test_suffix_is_case_insensitive(tmp_path):
    upper = tmp_path / "REPORT.PDF"
    upper.write_bytes((FIXTURES / "report.pdf").read_bytes())
    assert PDF_FACT in convert_file(upper).markdown


def test_broken_pdf_is_one_line_input_error_naming_the_file():
    path = FIXTURES / "broken.pdf"
    with pytest.raises(InputError) as info:
        convert_file(path)
    message = str(info.value)
    assert message.startswith(f"{path} could not be read as PDF: ")
    assert "\n" not in message
    assert "Traceback" not in message


def test_docx_that_is_not_a_zip(tmp_path):
    path = tmp_path / "fake.docx"
    path.write_text("just some words, not a Word document", encoding="utf-8")
    with pytest.raises(InputError, match=r"fake\.docx could not be read as DOCX: .*zip") as info:
        convert_file(path)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("module", "name"),
    [("markitdown", "report.pdf"), ("markitdown", "notes.docx"), ("trafilatura", "page.html")],
)
def test_missing_library_names_the_extra(monkeypatch, module, name):
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` raise ImportError
    path = FIXTURES / name
    with pytest.raises(InputError) as info:
        convert_file(path)
    message = str(info.value)
    assert "pip install 'engramdb[documents]'" in message
    assert f"reading {path.suffix} files" in message
    assert str(path) in message


def test_all_boilerplate_page_has_no_extractable_text(tmp_path):
    html = (FIXTURES / "page.html").read_text(encoding="utf-8")
    boilerplate_only = re.sub(r"<main>.*</main>", "", html, flags=re.DOTALL)
    assert HTML_FACT not in boilerplate_only and "<nav" in boilerplate_only
    path = tmp_path / "menus.html"
    path.write_text(boilerplate_only, encoding="utf-8")
    with pytest.raises(InputError, match=r"menus\.html has no extractable text"):
        convert_file(path)


def test_empty_body_has_no_extractable_text(tmp_path):
    path = tmp_path / "empty.htm"
    path.write_text("<html><head><title>Nothing here</title></head><body></body></html>", encoding="utf-8")
    with pytest.raises(InputError, match=r"empty\.htm has no extractable text"):
        convert_file(path)


def test_short_page_keeps_content_and_drops_menus(tmp_path):
    """A short article is where trafilatura's recall fallbacks would bring the menus back."""
    html = (FIXTURES / "page.html").read_text(encoding="utf-8")
    short = re.sub(
        r"<main>.*</main>",
        "<main><article><h1>Ferry notice</h1><p>The boat leaves at nine on Tuesday from the "
        "<a href='/piers/north'>north pier</a>.</p></article></main>",
        html,
        flags=re.DOTALL,
    )
    path = tmp_path / "short.html"
    path.write_text(short, encoding="utf-8")
    doc = convert_file(path)
    assert doc.markdown == "# Ferry notice\n\nThe boat leaves at nine on Tuesday from the north pier."


def test_unsupported_suffix(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello", encoding="utf-8")
    with pytest.raises(InputError, match=r"unsupported file type \.txt"):
        convert_file(path)


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match=r"nothere\.pdf could not be read"):
        convert_file(tmp_path / "nothere.pdf")


def test_clean_markdown_drops_images_comments_urls_and_blank_runs():
    raw = (
        "<!-- Slide number: 1 -->\r\n# Title\n\n\n\n"
        "![logo](https://example.com/logo.png) See [the fjord article](https://en.wikipedia.org/wiki/Fjord_(x)) "
        "or <https://example.com>.   \n\fNext  page"
    )
    assert clean_markdown(raw) == "# Title\n\nSee the fjord article or https://example.com.\n\nNext  page"
    assert clean_markdown("Next  page\fmore", pdf=True) == "Next page\n\nmore"
    assert clean_markdown("# Slide\nfirst bullet\nsecond bullet\n|a|b|\n|1|2|", slides=True) == (
        "# Slide\n\nfirst bullet\n\nsecond bullet\n\n|a|b|\n|1|2|"
    )


def test_html_fallback_when_trafilatura_finds_nothing_still_drops_boilerplate(monkeypatch):
    """markitdown reads the page only when trafilatura gives up, and never the marked-up menus."""
    import trafilatura

    monkeypatch.setattr(trafilatura, "extract", lambda *args, **kwargs: None)
    doc = convert_file(FIXTURES / "page.html")
    assert HTML_FACT in doc.markdown
    assert {"# Halvorsen Fjord Survey", "## Findings"} <= set(_heading_lines(doc.markdown))
    lowered = doc.markdown.lower()
    for junk in HTML_BOILERPLATE:
        assert junk.lower() not in lowered, junk
    assert doc.title == "Halvorsen Fjord Survey"
    _assert_clean(doc.markdown)

"""PDF, HTML, DOCX and PPTX files to Markdown, so the Markdown loader can take them from there.

Why Markdown: the ingestion pipeline already turns Markdown headings into section titles
(:mod:`engramdb.ingestion.markdown`), so a converter that keeps a document's headings as ``#``
lines gives office documents and web pages the same sectioning as hand-written notes, with no
second code path.

Why these libraries: file formats are full of corner cases (PDF text layout, Word styles, HTML
boilerplate) that well-kept libraries have already met. ``markitdown`` (pdfminer/pdfplumber,
mammoth, python-pptx underneath) reads PDF, DOCX and PPTX; ``trafilatura`` reads HTML, because a
web page is mostly navigation, headers, footers, cookie banners and sidebars, and only a
main-content extractor keeps those out of memory. Both are an optional extra
(``engramdb[documents]``) imported only when a file needs them, so the core install and its
start-up time do not pay for them. Nothing is downloaded at run time.

The libraries' output is then tidied the same way for every format: no image placeholders, no
HTML comments, link text without its URL, page breaks as paragraph breaks, at most one blank
line in a row.
"""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engramdb.platform.errors import InputError

#: File suffixes (lower case) that :func:`convert_file` reads.
CONVERTED_SUFFIXES: frozenset[str] = frozenset({".pdf", ".html", ".htm", ".docx", ".pptx"})

EXTRA = "engramdb[documents]"
_KIND = {".pdf": "PDF", ".html": "HTML", ".htm": "HTML", ".docx": "DOCX", ".pptx": "PPTX"}
#: A reason longer than this is cut: it goes into a one-line message, not a report.
_MAX_REASON = 160

# mammoth's default style map has no rule for Word's "Title" style, which would leave a
# document's title as a plain first paragraph; make it the top heading instead.
_DOCX_STYLE_MAP = "p[style-name='Title'] => h1:fresh"
# markdownify options: keep the words of links, drop URLs and images outright.
_MARKDOWNIFY = {"strip": ["a", "img"]}
# What a fallback HTML conversion must not read as content when trafilatura found none.
_BOILERPLATE_TAGS = ["nav", "header", "footer", "aside", "form", "script", "style", "noscript", "template"]
_BOILERPLATE_ROLES = {
    "navigation",
    "banner",
    "contentinfo",
    "complementary",
    "search",
    "dialog",
    "alertdialog",
}

_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
# A link or image target: a URL that may hold one level of parentheses (Wikipedia style),
# optionally followed by a quoted title.
_TARGET = r"\((?:[^()\s]|\([^()\s]*\))*(?:\s+\"[^\"]*\")?\)"
# An image goes with the spaces that separated it from the text (after it at a line's start).
_IMAGE = re.compile(r"^!\[[^\]]*\]" + _TARGET + r"[ \t]*|[ \t]*!\[[^\]]*\]" + _TARGET, re.MULTILINE)
_LINK = re.compile(r"\[([^\]]*)\]" + _TARGET)
_AUTOLINK = re.compile(r"<((?:https?|mailto):[^>\s]+)>")
_PAGE_BREAK = re.compile(r"[\f\v]")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_TRAILING_SPACE = re.compile(r"[ \t]+$", re.MULTILINE)
_INNER_SPACES = re.compile(r"(?<=\S)[ \t]{2,}(?=\S)")
_BLANK_RUN = re.compile(r"\n{3,}")
_WORD = re.compile(r"\w")
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_XML_NAMESPACES = {
    "rel": "http://schemas.openxmlformats.org/package/2006/relationships",
    "dc": "http://purl.org/dc/elements/1.1/",
}
_CORE_PROPERTIES = "http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties"


@dataclass(frozen=True)
class ConvertedDocument:
    """A file's text as Markdown, and the title the file itself declares.

    ``markdown`` has headings as ``#`` lines and paragraphs separated by one blank line.
    ``title`` comes from the file's own metadata (HTML ``og:title``/``<title>``, DOCX/PPTX/PDF
    document properties) and is None when there is none: the caller picks its own fallback
    (the first heading, the file name) rather than this module guessing.
    """

    markdown: str
    title: str | None


def convert_file(path: Path) -> ConvertedDocument:
    """Read the PDF, HTML, DOCX or PPTX file at ``path`` as Markdown.

    Raises InputError, with one line naming the file, when the suffix is not one of
    :data:`CONVERTED_SUFFIXES`, the optional libraries are not installed, the file cannot be
    read as its format, or it holds no text (a scanned PDF, a web page that is all menus).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    kind = _KIND.get(suffix)
    if kind is None:
        raise InputError(
            f"unsupported file type {suffix or '(none)'} for {path}: "
            f"convertible types are {', '.join(sorted(CONVERTED_SUFFIXES))}"
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path} could not be read: {exc.strerror or exc}") from exc
    if not data.strip():
        raise InputError(f"{path} is empty")
    try:
        if kind == "HTML":
            markdown, title = _convert_html(data)
        else:
            markdown, title = _convert_office(data, suffix)
    except InputError:
        raise
    except ImportError as exc:
        raise _missing_library(path, suffix) from exc
    except Exception as exc:  # the libraries raise anything from struct.error to KeyError on bad input
        if _is_missing_dependency(exc):
            raise _missing_library(path, suffix) from exc
        raise InputError(f"{path} could not be read as {kind}: {_reason(exc)}") from exc
    markdown = clean_markdown(markdown, pdf=kind == "PDF", slides=kind == "PPTX")
    if not _WORD.search(markdown):
        raise InputError(f"{path} has no extractable text ({_why_empty(kind)})")
    return ConvertedDocument(markdown=markdown, title=_clean_title(title))


def _convert_html(data: bytes) -> tuple[str, str | None]:
    """Main content by trafilatura; markitdown on the page minus its boilerplate if it finds none.

    ``favor_precision`` because a missed sidebar paragraph costs little, whereas a menu
    ingested as prose becomes false memories ("Home", "Careers" ...); without it trafilatura
    falls back, on short pages, to algorithms that keep the navigation.
    """
    import trafilatura

    if b"\x00" in data[:4096] and not data.startswith(_UTF16_BOMS):
        raise ValueError("binary data, not text")
    markdown = trafilatura.extract(
        data,
        output_format="markdown",
        favor_precision=True,
        include_comments=False,
        include_links=False,
        include_images=False,
        include_tables=True,
        deduplicate=False,
    )
    metadata = trafilatura.extract_metadata(data)
    title = metadata.title if metadata is not None else None
    if markdown and _WORD.search(markdown):
        return markdown, title
    return _markitdown_html(data), title


def _markitdown_html(data: bytes) -> str:
    """The page through markitdown, with the regions HTML itself marks as not-content removed.

    Only reached when trafilatura found no main content, which is also what an all-menus page
    looks like, so the fallback must not bring the menus back.
    """
    from bs4 import BeautifulSoup
    from markitdown.converters import HtmlConverter

    soup = BeautifulSoup(data, "html.parser")
    for element in soup.find_all(_BOILERPLATE_TAGS):
        element.decompose()
    for element in soup.find_all(attrs={"role": True}):
        if not element.decomposed and str(element.get("role", "")).lower() in _BOILERPLATE_ROLES:
            element.decompose()
    return HtmlConverter().convert_string(str(soup), **_MARKDOWNIFY).markdown


def _convert_office(data: bytes, suffix: str) -> tuple[str, str | None]:
    """PDF, DOCX or PPTX through markitdown's converter for that format.

    The converter is called directly, not through ``MarkItDown().convert``: the suffix already
    says what the file is, so content sniffing (magika) has nothing to add, and a direct call
    lets a corrupt file surface as the reader's own exception, not a report of every converter
    that was tried.
    """
    from markitdown import StreamInfo
    from markitdown.converters import DocxConverter, PdfConverter, PptxConverter

    info = StreamInfo(extension=suffix)
    if suffix == ".pdf":
        result = PdfConverter().convert(io.BytesIO(data), info)
        return result.markdown, _pdf_title(data)
    if suffix == ".docx":
        result = DocxConverter().convert(io.BytesIO(data), info, style_map=_DOCX_STYLE_MAP, **_MARKDOWNIFY)
    else:
        result = PptxConverter().convert(io.BytesIO(data), info)
    return result.markdown, _ooxml_title(data)


def _pdf_title(data: bytes) -> str | None:
    """The Title entry of the PDF's document information, None when absent or unreadable.

    A missing title must not fail a file whose text was read, hence the broad except.
    """
    try:
        from pdfminer.pdfdocument import PDFDocument
        from pdfminer.pdfparser import PDFParser
        from pdfminer.pdftypes import resolve1
        from pdfminer.utils import decode_text

        for info in PDFDocument(PDFParser(io.BytesIO(data))).info:
            title = resolve1(info.get("Title"))
            if isinstance(title, bytes):
                return decode_text(title)
            if isinstance(title, str):
                return title
    except Exception:
        return None
    return None


def _ooxml_title(data: bytes) -> str | None:
    """``dc:title`` of a DOCX/PPTX package's core properties, None when absent or unreadable.

    The core-properties part is found through the package relationships, as the Open
    Packaging Conventions define, rather than assumed to be ``docProps/core.xml``.
    """
    try:
        from defusedxml import ElementTree

        with zipfile.ZipFile(io.BytesIO(data)) as package:
            rels = ElementTree.fromstring(package.read("_rels/.rels"))
            for rel in rels.findall("rel:Relationship", _XML_NAMESPACES):
                if rel.get("Type") == _CORE_PROPERTIES:
                    part = posixpath.normpath(rel.get("Target", "").lstrip("/"))
                    core = ElementTree.fromstring(package.read(part))
                    return core.findtext("dc:title", default=None, namespaces=_XML_NAMESPACES)
    except Exception:
        return None
    return None


def clean_markdown(markdown: str, *, pdf: bool = False, slides: bool = False) -> str:
    """Tidy a converter's Markdown into what the passage splitter expects.

    Image placeholders and HTML comments (markitdown marks slides with them) carry no words;
    a URL inside a passage would be read as text; form feeds (PDF page breaks) end a
    paragraph; PDF justification leaves runs of spaces between words. Slides put each bullet
    on its own line with no blank line between, which Markdown would join into one run-on
    paragraph, so for slides every line stands alone (table rows excepted).
    """
    text = markdown.replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL.sub("", _PAGE_BREAK.sub("\n\n", text))
    text = _COMMENT.sub("", text)
    text = _IMAGE.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _TRAILING_SPACE.sub("", text)
    if pdf:
        text = _INNER_SPACES.sub(" ", text)
    if slides:
        text = _separate_lines(text)
    return _BLANK_RUN.sub("\n\n", text).strip()


def _separate_lines(text: str) -> str:
    out: list[str] = []
    for line in text.split("\n"):
        if out and out[-1] and line and not (line.startswith("|") and out[-1].startswith("|")):
            out.append("")
        out.append(line)
    return "\n".join(out)


def _clean_title(title: Any) -> str | None:
    if not isinstance(title, str):
        return None
    title = " ".join(title.split())
    return title or None


def _missing_library(path: Path, suffix: str) -> InputError:
    return InputError(f"{path}: reading {suffix} files needs the optional extra: pip install '{EXTRA}'")


def _is_missing_dependency(exc: Exception) -> bool:
    """markitdown reports a missing pdfminer/mammoth/python-pptx with its own exception type."""
    return type(exc).__name__ == "MissingDependencyException"


def _reason(exc: Exception) -> str:
    """The first line of the library's message (or the exception's name), short enough for one line."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    reason = lines[0] if lines else type(exc).__name__
    if len(reason) > _MAX_REASON:
        reason = reason[: _MAX_REASON - 3].rstrip() + "..."
    return reason


def _why_empty(kind: str) -> str:
    if kind == "PDF":
        return "a scanned PDF needs OCR first"
    if kind == "HTML":
        return "no main content outside navigation, headers, footers and sidebars"
    return "it holds no text, only images or empty pages"

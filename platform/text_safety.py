"""Text at the program's edges: input that must be Unicode, stored text shown on a terminal.

Two hazards, one module, so every entry and exit point applies the same rules:

* Python decodes command-line arguments with ``surrogateescape``: bytes that are not UTF-8
  arrive as lone surrogates (``"\\udcff"``), which nothing downstream can encode. The Neo4j
  driver, the tokenizer and the terminal each fail with a traceback of their own, far from
  the argument that caused it. :func:`require_unicode` refuses such text where it enters,
  naming the argument and the byte.
* Stored text (documents, titles, ids) may hold terminal control sequences: ``ESC ]0;... BEL``
  retitles the window, ``ESC [31m`` recolours what follows, ``CR`` lets a line overwrite
  itself. Printed raw, they drive the terminal of whoever reads the output. :func:`visible`
  shows them as escapes instead, for every human-readable output; JSON output keeps the text
  as stored (JSON escapes control characters anyway).
"""

from __future__ import annotations

import re

from engramdb.platform.errors import InputError

_SURROGATE = re.compile("[\ud800-\udfff]")
#: What :func:`visible` rewrites: C0 controls except tab and newline, DEL, C1 controls, the
#: bidi embedding/override/isolate marks (they reorder what follows on screen), lone surrogates.
_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def unicode_problem(text: str, what: str) -> str | None:
    """Why ``text`` is not valid Unicode (one sentence naming ``what``), or None when it is.

    A surrogate in U+DC80..U+DCFF is a byte that ``surrogateescape`` could not decode: the
    message names that byte and its offset in the original bytes, which is what the user typed
    or the shell passed. Any other lone surrogate (a broken ``\\ud800`` escape, an SDK caller's
    string) is named as the code point and its character offset.
    """
    bad = _SURROGATE.search(text)
    if bad is None:
        return None
    try:
        raw = text.encode("utf-8", "surrogateescape")
        raw.decode("utf-8")
    except UnicodeEncodeError:
        pass  # a surrogate that stands for no byte
    except UnicodeDecodeError as exc:
        return f"{what} is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at position {exc.start})"
    return (
        f"{what} is not valid Unicode text: a lone surrogate U+{ord(bad.group()):04X} at character "
        f"{bad.start()} (invalid UTF-8 bytes or a broken \\u escape)"
    )


def require_unicode(text: str, what: str) -> str:
    """``text`` unchanged, or :class:`InputError` saying why it is not valid Unicode.

    ``what`` names the text for the message, e.g. ``"the question"``.
    """
    problem = unicode_problem(text, what)
    if problem is not None:
        raise InputError(problem)
    return text


def _escape_code(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, *, one_line: bool = False) -> str:
    """``text`` with its control characters shown as escapes (ESC as ``\\x1b``, BEL as ``\\x07``).

    Tab and newline stay as they are (they lay text out, they do not drive the terminal),
    unless ``one_line`` folds them to spaces for a place that wants a single line.
    """
    shown = _HIDDEN.sub(_escape_code, text)
    return shown.replace("\t", " ").replace("\n", " ") if one_line else shown

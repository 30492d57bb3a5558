"""Text clean-up before parsing, and the life dates hidden in parentheses.

Parenthetical asides ("Tennessee (i/tɛnᵻˈsiː/) (Cherokee: ...) is a state",
"Teutberga( died 11 November 875) was ...") wreck a small dependency parser,
so they are cut out of the text that gets parsed. The few that carry facts --
birth and death dates and places -- are read here with plain patterns and
returned as :class:`LifeFact` anchored at the character offset where the
aside was, so the extractor can attach them to the entity just before it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from engramdb.ingestion.extraction.rules_lexicon import MONTH_PATTERN

_MONTH = MONTH_PATTERN
_DATE = (
    rf"(?:(?:c\.|ca\.|circa|about|before|after)\s*)?"
    rf"(?:(?:\d{{1,2}}\s+{_MONTH}|{_MONTH}\s+\d{{1,2}},?|{_MONTH})\s+)?"
    rf"\d{{3,4}}(?:\s*(?:BC|BCE|AD|CE)\b)?"
)
_PLACE = r"[A-Z][\w.'’-]*(?:\s+(?:of\s+|de\s+|the\s+)?[A-Z][\w.'’-]*)*(?:,\s*[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*)*)*"
_EVENT_RE = re.compile(
    rf"\b(?P<kind>born|b\.|died|d\.)\s*"
    rf"(?:(?:in|at)\s+(?P<place1>{_PLACE})\s*,?\s*)?"
    rf"(?:(?:on|in)\s+)?(?P<date>{_DATE})?"
    rf"(?:\s*,?\s*(?:in|at)\s+(?P<place>{_PLACE}))?"
)
_RANGE_RE = re.compile(rf"^\s*(?P<a>{_DATE})?\s*[–—-]+\s*(?P<b>{_DATE})\s*$")


@dataclass(frozen=True)
class LifeFact:
    """What an aside at ``offset`` says: ``born``/``died`` with a date and/or place, a year, a conversion."""

    offset: int
    kind: str  # "born", "died"; "year" (a bare year: a work's date) or "converted" (the same amount in other units)
    date: str | None
    place: str | None
    text: str = ""


def clean_text(text: str) -> tuple[str, list[LifeFact]]:
    """The text to parse (asides removed, spacing repaired) and the life facts of its asides."""
    # ``...'' pairs become "...", spaced as written text is ('Hubert ``Happy ''Hopper' -> 'Hubert "Happy" Hopper')
    text = re.sub(
        r"``\s*([^`']{1,80}?)\s*''(\w?)", lambda m: f'"{m[1]}"' + (f" {m[2]}" if m[2] else ""), text
    )
    text = text.replace("``", '"').replace("''", '"')
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"(\w)- (\w)", r"\1-\2", text)  # "half- brother" -> "half-brother"
    text = _GLUED_DATES.sub(r"\1 – ", text)  # "(May 2, 1901June 5, 1960)": the dash of a life span was lost
    text = re.sub(r"([a-z]) - ([a-z])", r"\1-\2", text)  # "employee - owned" -> "employee-owned"
    text = re.sub(
        r"\b([A-Z][a-z]+) - ([A-Z][a-z]+)\b", r"\1-\2", text
    )  # "Russo - Japanese" -> "Russo-Japanese"
    out: list[str] = []
    facts: list[LifeFact] = []
    clauses: list[str] = []  # asides that are sentences of their own ("Ruth died in 1992")
    depth = 0
    start = 0
    buf_start = 0
    for i, ch in enumerate(text):
        if ch in "([":
            if depth == 0:
                out.append(text[buf_start:i])
                start = i + 1
            depth += 1
        elif ch in ")]" and depth > 0:
            depth -= 1
            if depth == 0:
                anchor = len("".join(out).rstrip())
                found = _life_facts(text[start:i], anchor)
                facts.extend(found)
                if not found and _CLAUSE_RE.search(text[start:i]):
                    clauses.append(text[start:i].strip())
                buf_start = i + 1
    if depth == 0:
        out.append(text[buf_start:])
    else:  # unbalanced: keep the rest as it is
        out.append(text[start - 1 :])
    cleaned = "".join(out)
    cleaned = re.sub(r"\s+([,.;:])", r"\1", cleaned)
    cleaned = re.sub(r"\s+", " ", cleaned).strip()
    # offsets were taken on the text before the last squeeze; recompute them against the cleaned text
    facts = _realign(facts, "".join(out), cleaned)
    for clause in clauses:  # parsed after the text, where they shift no offset
        clause = clause[:1].upper() + clause[1:]
        cleaned = f"{cleaned} {clause.rstrip('.;, ')}."
    return cleaned, facts


def _realign(facts: list[LifeFact], raw: str, cleaned: str) -> list[LifeFact]:
    if not facts or raw == cleaned:
        return facts
    mapping: list[int] = []
    j = 0
    for i in range(len(raw) + 1):
        mapping.append(j)
        if i < len(raw) and j < len(cleaned) and raw[i] == cleaned[j]:
            j += 1
    return [replace(f, offset=mapping[min(f.offset, len(raw))]) for f in facts]


def _life_facts(inner: str, anchor: int) -> list[LifeFact]:
    inner = inner.strip()
    found: list[LifeFact] = []
    for m in _EVENT_RE.finditer(inner):
        lead = re.split(r"[;,]", inner[: m.start()])[-1]
        if len(re.findall(r"[A-Za-z]{2,}", lead)) >= 2 or re.search(r"[A-Z][a-z]", lead):
            continue  # "(Ruth died in 1992)": someone else's death, a clause of its own
        kind = "born" if m.group("kind").startswith("b") else "died"
        date = m.group("date")
        place = m.group("place") or m.group("place1")
        if date or place:
            found.append(LifeFact(anchor, kind, date.strip() if date else None, _trim_place(place)))
    if found:
        return found
    for part in inner.split(";"):
        m = _RANGE_RE.match(part)
        if m:
            born = [LifeFact(anchor, "born", m.group("a").strip(), None)] if m.group("a") else []
            return [*born, LifeFact(anchor, "died", m.group("b").strip(), None)]
    if _YEAR_RE.fullmatch(inner):
        return [LifeFact(anchor, "year", inner, None)]
    if _ACRONYM_RE.fullmatch(inner):
        return [LifeFact(anchor, "alias", None, None, inner)]
    if _CAST_RE.fullmatch(inner):  # "Jefferson Smith (James Stewart)": who plays the role
        return [LifeFact(anchor, "cast", None, None, inner)]
    if _AMOUNT_RE.fullmatch(inner):
        return [LifeFact(anchor, "converted", None, None, inner)]
    return []


# a year glued to the month of the next date: a date range whose dash was lost
_GLUED_DATES = re.compile(rf"(\b\d{{3,4}})(?={_MONTH}\s+\d)")
# "(DZ)", "(NCP)": the short name of what was just named
_ACRONYM_RE = re.compile(r"[A-Z][A-Z&.]{1,7}")
_NAME = r"[A-Z][\w.'’-]+(?:\s+[A-Z][\w.'’-]+){1,3}"
# "(Guy Kibbee)", "(John Beal and Wanda McKay)": actors after the characters they play
_CAST_RE = re.compile(rf"{_NAME}(?:\s+and\s+{_NAME})?")
# an aside that is a clause: a subject, a finite verb, at least four words
_CLAUSE_RE = re.compile(
    r"^(?!(?:also|formerly|now|or|i\.e\.|e\.g\.|see)\b)(?=(?:\S+\s+){3,})"
    r".*\b(?:is|was|were|are|has|had|died|became|won|led|joined|moved|founded|built|married)\b"
)
# "(1948)", "(1904–05)": the year of the work or event just named
_YEAR_RE = re.compile(r"\d{4}(?:\s*[–—-]+\s*\d{2,4})?")
# "(−128.6 °F)", "(9,596 ft)", "(229 mi)": the amount just named, in other units
_AMOUNT_RE = re.compile(
    r"(?:about\s+|approx\.\s+)?[−-]?\s?\d[\d,.]*(?:\s*[–-]\s*[−-]?\d[\d,.]*)?"  # "70–91 °F": a range too
    r"\s*(?:°\s*[CF]|[a-zA-Z]{1,3}\.?(?:\s*2)?|sq\s+mi|sq\s+km|km2|mi2)"
)


def _trim_place(place: str | None) -> str | None:
    if not place:
        return None
    place = place.strip().rstrip(",.")
    # "Paris, France" stays; a trailing date or verb is cut by the pattern already
    return place or None

"""What kind of answer a (sub-)question asks for, and how well a stored answer fits it.

Chain search moves from hop to hop through answers, so an answer of the wrong
kind does double damage: it is a wrong answer, and the next hop then asks
about it ("What country was 1865 a citizen of?"). This module reads the
expected kind from the question's wh-word and the noun it asks about, with no
model and no data:

* ``when`` / "what year" → a date; "how many" / "what population" → a number
  (digits or words: "Four" is an amount, not a name);
* ``who`` / ``whom`` → a person or an organisation;
* ``where`` → a place; "what country" → a place that *is* a country (a
  nationality adjective such as "Norwegian" is turned into its country,
  "Norway"); "what nationality" accepts either; "what city" → a place that is
  not a country;
* "what company / band / team" → an organisation, "what film / album" → a
  work, "what language" → a language;
* otherwise nothing is expected and every answer fits.

:func:`fit` grades a stored answer (its name and entity type) against the
expected kind as a multiplier in (0, 1]: 1 when it fits, a mild penalty when
its type is unknown, a strong one for a clear category error (a date for
"who"). :func:`can_feed_next_hop` says whether an answer may be substituted
into a later sub-question: dates, numbers and lowercase common nouns
("play", "physicist") never are, because no later hop is *about* them.

Country knowledge (which names are countries, which adjective belongs to
which country) is the offline extractor's lexicon, so ingestion and
retrieval agree on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engramdb.ingestion.extraction.rules_lexicon import country_of_demonym, place_kind

#: Entity types that are never the subject of a later hop.
NON_ENTITY_TYPES = frozenset({"DATE", "NUMBER"})

_MONTHS = "january february march april may june july august september october november december".split()
_DATE_LIKE = re.compile(
    r"^(?:c\.\s*)?(?:\d{1,2}\s+)?(?:(?:" + "|".join(_MONTHS) + r")\.?\s+)?(?:\d{1,2},?\s+)?\d{1,4}"
    r"(?:\s*(?:bc|bce|ad|ce|s))?$|^\d{1,2}(?:st|nd|rd|th)\s+century$|^(?:" + "|".join(_MONTHS) + r")$",
    re.IGNORECASE,
)
_NUMBER_LIKE = re.compile(
    r"^[~≈]?\s*[\d.,]+\s*(?:%|percent|million|billion|thousand|hundred)?\b", re.IGNORECASE
)

#: Amounts spelled out ("Four", "twenty-one", "two hundred"): the extractor keeps them as plain
#: things, and without this list a capitalised "Four" would pass for a name.
_NUMBER_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred "
    "thousand million billion trillion dozen dozens hundreds thousands millions".split()
)


@dataclass(frozen=True)
class ExpectedType:
    """The kind of answer a question asks for.

    ``kind`` is one of ``date``, ``number``, ``agent`` (who: person or
    organisation), ``person``, ``org``, ``place``, ``country``, ``city``,
    ``nationality``, ``language``, ``work``; ``noun`` is the word it was read
    from ("country", "year", or the wh-word).
    """

    kind: str
    noun: str = ""


# The noun a question asks about -> the kind of its answer.
_NOUN_KINDS: dict[str, str] = {
    **dict.fromkeys("year date day month century decade time era birthday".split(), "date"),
    **dict.fromkeys(
        "number population percentage amount count total height length width depth age size area "
        "capacity attendance".split(),
        "number",
    ),
    **dict.fromkeys(["country", "nation", "sovereign state"], "country"),
    "nationality": "nationality",
    "citizenship": "nationality",
    **dict.fromkeys(
        "city town village capital municipality suburb neighborhood neighbourhood borough hamlet".split(),
        "city",
    ),
    **dict.fromkeys(
        "place state county province region district continent island river lake mountain location "
        "birthplace area territory sea ocean park street building stadium venue arena airport "
        "station prefecture commune parish department canton".split(),
        "place",
    ),
    **dict.fromkeys("language languages tongue".split(), "language"),
    **dict.fromkeys(
        "company organization organisation band group team club label network university college school "
        "party publisher studio firm corporation agency institution association society league "
        "manufacturer airline brand broadcaster channel station's".split(),
        "org",
    ),
    **dict.fromkeys(
        "film movie album song single book novel play show series opera work game poem painting "
        "magazine newspaper journal sitcom episode".split(),
        "work",
    ),
    **dict.fromkeys(
        "person man woman actor actress singer director author writer composer player president king "
        "queen leader founder father mother son daughter wife husband spouse brother sister "
        "artist musician politician producer performer".split(),
        "person",
    ),
}

_WH = re.compile(r"\b(when|where|who|whom|whose|what|which|how)\b", re.IGNORECASE)
_SKIP_AFTER_WH = frozenset(
    {"kind", "type", "sort", "of", "the", "a", "an", "other", "particular", "specific"}
)
_VERBS_AFTER_WH = frozenset(
    "is was are were does do did has have had can could will would may might shall should".split()
)
_REL_NOUN = re.compile(r"\bthe\s+(?:(?:\w+)\s+){0,2}?(\w+)\s+of\b", re.IGNORECASE)


def _after_wh(question: str) -> tuple[str, list[str], str] | None:
    """The question's first wh-word (lower case), the words after it (lower case) and the text
    after it, or None when it has none."""
    text = " ".join(question.strip().split())
    match = _WH.search(text)
    if match is None:
        return None
    tail = text[match.end() :]
    return match.group(1).lower(), re.findall(r"[\w'’-]+", tail.lower()), tail


def expected_type(question: str) -> ExpectedType | None:
    """The kind of answer ``question`` asks for, or None when it does not say.

    Reads the first wh-word (wherever it is: "In what year ...", "... is based
    in what city?") and the noun right after it ("what country"); for "What
    is the capital of X?" the relational noun ("capital") decides.
    """
    found = _after_wh(question)
    if found is None:
        return None
    wh, rest, tail = found
    if wh == "when":
        return ExpectedType("date", "when")
    if wh == "where":
        return ExpectedType("place", "where")
    if wh in ("who", "whom"):
        return ExpectedType("agent", wh)
    if wh == "how":
        if rest and rest[0] in ("many", "much", "old", "long", "tall", "high", "far", "big", "large", "deep"):
            return ExpectedType("number", rest[0])
        return None
    # what / which / whose: the noun that follows, else the relational noun ("the capital of")
    words = [w for w in rest[:4] if w not in _SKIP_AFTER_WH]
    if words and words[0] not in _VERBS_AFTER_WH:
        for span in (2, 1):
            key = " ".join(words[:span])
            if key in _NOUN_KINDS:
                return ExpectedType(_NOUN_KINDS[key], key)
        if len(words) > 1 and words[1] in _NOUN_KINDS:  # "what Norwegian city", "which American band"
            return ExpectedType(_NOUN_KINDS[words[1]], words[1])
        if wh == "whose":
            return ExpectedType("agent", "whose")
        return None
    rel = _REL_NOUN.search(tail)
    if rel is not None and rel.group(1).lower() in _NOUN_KINDS:
        noun = rel.group(1).lower()
        return ExpectedType(_NOUN_KINDS[noun], noun)
    return None


def asked_noun(question: str) -> str | None:
    """The noun a "which/what" question asks for, known kind or not ("Which krai ...?" → "krai",
    "What Norwegian city ...?" → "city"); None for "What is ...?", "Who ...?" and the like.

    A name often carries its kind ("Khabarovsk Krai", "Hotel Clarke", "Tungabhadra River"), so the
    noun is a clue to the answer even where :func:`expected_type` knows no kind for it."""
    expected = expected_type(question)
    if expected is not None and expected.noun in _NOUN_KINDS:
        return expected.noun
    found = _after_wh(question)
    if found is None or found[0] not in ("what", "which"):
        return None
    words = [w for w in found[1][:3] if w not in _SKIP_AFTER_WH]
    if not words or words[0] in _VERBS_AFTER_WH or _WH.fullmatch(words[0]):
        return None
    return words[0]


def is_date(name: str) -> bool:
    return bool(_DATE_LIKE.match(name.strip()))


def is_number(name: str) -> bool:
    return bool(_NUMBER_LIKE.match(name.strip())) or is_number_word(name)


def is_number_word(name: str) -> bool:
    """An amount in words: "Four", "twenty-one", "two hundred and five" (not "One Direction")."""
    words = [w for w in re.split(r"[\s-]+", name.strip().lower()) if w and w not in ("and", "a")]
    return bool(words) and all(w in _NUMBER_WORDS for w in words)


def is_common_noun(name: str, entity_type: str) -> bool:
    """A lowercase word or phrase with no name in it ("play", "verse tragedy")."""
    return entity_type in ("THING", "") and not any(ch.isupper() or ch.isdigit() for ch in name)


def can_feed_next_hop(name: str, entity_type: str) -> bool:
    """Whether this answer may be substituted into a later sub-question.

    Later hops ask about an *entity*; a date, a number or a lowercase common
    noun is a property, so a chain whose intermediate answer is one of them
    has gone wrong ("What country was 1865 a citizen of?").
    """
    name = name.strip()
    if not name or entity_type in NON_ENTITY_TYPES:
        return False
    if is_date(name) or (is_number(name) and not re.search(r"[A-Za-z]{2}", name)):
        return False
    if is_number_word(name) and entity_type in ("THING", ""):  # a film named "Seven" keeps its WORK type
        return False
    return not is_common_noun(name, entity_type)


def country_of(name: str) -> str | None:
    """The country an answer names: itself when it is a country, the country of a nationality
    adjective ("Norwegian" → "Norway"), else None."""
    clean = name.strip()
    if place_kind(clean) == "country":
        return clean
    return country_of_demonym(clean)


# Multipliers: a fitting answer keeps its score, an untyped one loses a little,
# a clear category error (a date for "who") most of it.
FITS = 1.0
UNKNOWN = 0.8
WEAK = 0.6
WRONG = 0.35


def fit(expected: ExpectedType | None, name: str, entity_type: str) -> float:
    """How well an answer (name, entity type) fits the expected kind, as a multiplier in (0, 1]."""
    if expected is None:
        return FITS
    kind = expected.kind
    t = (entity_type or "THING").upper()
    named = not is_common_noun(name, t)
    if kind == "date":
        return FITS if t == "DATE" or is_date(name) else WRONG
    if kind == "number":
        if t == "NUMBER" or (is_number(name) and t != "DATE"):
            return FITS
        return WEAK if t == "DATE" else WRONG
    if t in NON_ENTITY_TYPES or is_date(name) or (t == "THING" and is_number_word(name)):
        return WRONG  # every other kind asks for a thing, not a date or amount
    thing = UNKNOWN if named else WEAK
    if kind == "agent":
        return {"PERSON": FITS, "ORG": FITS, "NORP": UNKNOWN, "THING": thing}.get(t, WEAK)
    if kind == "person":
        return {"PERSON": FITS, "ORG": UNKNOWN, "THING": thing}.get(t, WEAK)
    if kind == "org":
        return {"ORG": FITS, "PERSON": WEAK, "PLACE": WEAK, "WORK": WEAK, "THING": thing}.get(t, WEAK)
    if kind == "work":
        return {"WORK": FITS, "PRODUCT": UNKNOWN, "EVENT": UNKNOWN, "THING": thing}.get(t, WEAK)
    if kind == "language":
        return FITS if t in ("LANGUAGE", "NORP") else thing if t == "THING" else WEAK
    if kind == "country":
        if place_kind(name) == "country":
            return FITS
        if country_of_demonym(name):
            return UNKNOWN  # a nationality adjective: usable once turned into its country
        return WEAK if t in ("PLACE", "THING") and named else WRONG
    if kind == "nationality":
        if country_of(name) or t == "NORP":
            return FITS
        return WEAK if named else WRONG
    if kind == "city":
        if t == "PLACE":
            return WEAK if place_kind(name) == "country" else FITS
        return thing if t == "THING" else WEAK
    if kind == "place":
        return {"PLACE": FITS, "ORG": UNKNOWN, "EVENT": WEAK, "THING": thing}.get(t, WEAK)
    return FITS

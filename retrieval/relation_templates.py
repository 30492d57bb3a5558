"""Natural-question templates for relations, used by the decomposers.

Two tables:

* :data:`KB_RELATIONS` turns a knowledge-base style sub-question such as
  ``"Hello Love >> performer"`` (Wikidata property labels, as MuSiQue's gold
  decompositions use them) into ``"Who is the performer of Hello Love?"``. The
  templates keep the relation's own words so that BM25 and dense matching
  against extracted question–answer pairs still see them.
* :data:`ROLE_NOUNS` lists relational nouns ("director", "spouse", "city of
  birth", ...) that the offline decomposer recognises inside a question
  ("the director of Big Eyes", "Big Eyes's director") and turns into a hop.

``{x}`` in a template is the subject (an entity name or a placeholder).
"""

from __future__ import annotations

import re

# Wikidata-style relation label -> question about the subject {x}.
KB_RELATIONS: dict[str, str] = {
    # people and works
    "performer": "Who is the performer of {x}?",
    "author": "Who is the author of {x}?",
    "composer": "Who is the composer of {x}?",
    "lyricist": "Who is the lyricist of {x}?",
    "producer": "Who is the producer of {x}?",
    "director": "Who is the director of {x}?",
    "screenwriter": "Who is the screenwriter of {x}?",
    "cast member": "Who is a cast member of {x}?",
    "creator": "Who is the creator of {x}?",
    "developer": "Who is the developer of {x}?",
    "designer": "Who is the designer of {x}?",
    "architect": "Who is the architect of {x}?",
    "illustrator": "Who is the illustrator of {x}?",
    "editor": "Who is the editor of {x}?",
    "presenter": "Who is the presenter of {x}?",
    "narrator": "Who is the narrator of {x}?",
    "manufacturer": "Who is the manufacturer of {x}?",
    "publisher": "Who is the publisher of {x}?",
    "distributor": "Who is the distributor of {x}?",
    "distributed by": "Who distributed {x}?",
    "production company": "What production company produced {x}?",
    "record label": "What is the record label of {x}?",
    "original broadcaster": "What network originally broadcast {x}?",
    "original network": "What network originally broadcast {x}?",
    "notable work": "What is a notable work of {x}?",
    "genre": "What is the genre of {x}?",
    "award received": "What award did {x} receive?",
    "nominated for": "What was {x} nominated for?",
    "characters": "What characters appear in {x}?",
    "followed by": "What followed {x}?",
    "follows": "What came before {x}?",
    "based on": "What is {x} based on?",
    "language of work or name": "What language is {x} in?",
    "original language of film or tv show": "What is the original language of {x}?",
    "publication date": "When was {x} published?",
    # family
    "spouse": "Who is the spouse of {x}?",
    "father": "Who is the father of {x}?",
    "mother": "Who is the mother of {x}?",
    "child": "Who is the child of {x}?",
    "sibling": "Who is the sibling of {x}?",
    "relative": "Who is a relative of {x}?",
    # biography
    "country of citizenship": "What country is {x} a citizen of?",
    "place of birth": "Where was {x} born?",
    "place of death": "Where did {x} die?",
    "place of burial": "Where is {x} buried?",
    "date of birth": "When was {x} born?",
    "date of death": "When did {x} die?",
    "cause of death": "What was the cause of death of {x}?",
    "residence": "Where did {x} live?",
    "educated at": "Where was {x} educated?",
    "occupation": "What is the occupation of {x}?",
    "position held": "What position did {x} hold?",
    "employer": "Who is the employer of {x}?",
    "member of": "What is {x} a member of?",
    "member of sports team": "What sports team is {x} a member of?",
    "member of political party": "What political party is {x} a member of?",
    "military branch": "What military branch did {x} serve in?",
    "sport": "What sport does {x} play?",
    "position played on team / speciality": "What position does {x} play?",
    "league": "What league does {x} play in?",
    "native language": "What is the native language of {x}?",
    "languages spoken, written or signed": "What languages does {x} speak?",
    "religion": "What is the religion of {x}?",
    "ethnic group": "What ethnic group does {x} belong to?",
    "field of work": "What is the field of work of {x}?",
    "student of": "Who was {x} a student of?",
    "doctoral advisor": "Who was the doctoral advisor of {x}?",
    "conflict": "What conflict did {x} take part in?",
    "participant of": "What event did {x} participate in?",
    "participant": "Who participated in {x}?",
    # places
    "country": "What country is {x} in?",
    "country of origin": "What is the country of origin of {x}?",
    "continent": "What continent is {x} on?",
    "located in the administrative territorial entity": (
        "In which administrative territorial entity is {x} located?"
    ),
    "contains administrative territorial entity": "What administrative territorial entity does {x} contain?",
    "location": "What is the location of {x}?",
    "located in or next to body of water": "What body of water is {x} located in or next to?",
    "located on terrain feature": "What terrain feature is {x} located on?",
    "shares border with": "What shares a border with {x}?",
    "capital": "What is the capital of {x}?",
    "capital of": "What is {x} the capital of?",
    "headquarters location": "Where is the headquarters of {x} located?",
    "work location": "Where did {x} work?",
    "mouth of the watercourse": "What does {x} flow into?",
    "tributary": "What is a tributary of {x}?",
    "official language": "What is the official language of {x}?",
    "currency": "What is the currency of {x}?",
    "head of government": "Who is the head of government of {x}?",
    "head of state": "Who is the head of state of {x}?",
    "twinned administrative body": "What is the sister city of {x}?",
    "applies to jurisdiction": "What jurisdiction does {x} apply to?",
    "licensed to broadcast to": "What place is {x} licensed to broadcast to?",
    "home venue": "What is the home venue of {x}?",
    # organisations and things
    "founded by": "Who founded {x}?",
    "inception": "When was {x} founded?",
    "owned by": "Who owns {x}?",
    "owner of": "What does {x} own?",
    "parent organization": "What is the parent organization of {x}?",
    "subsidiary": "What is a subsidiary of {x}?",
    "industry": "What industry is {x} in?",
    "chairperson": "Who is the chairperson of {x}?",
    "director / manager": "Who is the director or manager of {x}?",
    "instance of": "What is {x} an instance of?",
    "subclass of": "What is {x} a subclass of?",
    "part of": "What is {x} part of?",
    "has part": "What is part of {x}?",
    "replaced by": "What replaced {x}?",
    "replaces": "What did {x} replace?",
    "platform": "What platform is {x} on?",
    "named after": "What is {x} named after?",
}

GENERIC_TEMPLATE = "What is the {relation} of {x}?"


def normalize_relation(relation: str) -> str:
    return re.sub(r"\s+", " ", relation).strip().lower()


def kb_question(subject: str, relation: str) -> str:
    """``("Hello Love", "performer")`` -> ``"Who is the performer of Hello Love?"``.

    Unknown relations get the generic ``"What is the <relation> of <subject>?"``.
    """
    key = normalize_relation(relation)
    template = KB_RELATIONS.get(key)
    if template is None:
        return GENERIC_TEMPLATE.format(relation=key, x=subject)
    return template.format(x=subject)


# Relational nouns the offline decomposer turns into a hop: "the <noun> of X",
# "X's <noun>". Value: a template for the hop, or None for the default
# ("Who is the <noun> of X?" for people, "What is the <noun> of X?" otherwise).
PERSON_ROLE_NOUNS = frozenset(
    """director producer performer singer songwriter author writer composer lyricist creator founder
    co-founder father mother son daughter spouse wife husband brother sister sibling child parent
    grandfather grandmother grandson granddaughter uncle aunt nephew niece cousin owner publisher
    developer designer architect president vice-president chairman chairwoman chairperson ceo head leader
    mayor governor coach manager editor screenwriter star presenter host successor predecessor king queen
    monarch emperor ruler captain conductor illustrator narrator inventor discoverer sculptor painter
    frontman vocalist drummer guitarist teacher student advisor mentor commander minister""".split()
) | {"prime minister", "founding member", "lead singer", "lead vocalist", "head coach"}

THING_ROLE_NOUNS = {
    "capital",
    "continent",
    "team",
    "club",
    "political party",
    "party",
    "country",
    "nationality",
    "headquarters",
    "record label",
    "label",
    "alma mater",
    "language",
    "official language",
    "native language",
    "currency",
    "genre",
    "location",
    "mouth",
    "source",
    "home stadium",
    "home ground",
    "home venue",
    "parent company",
    "parent organization",
    "manufacturer",
    "distributor",
    "network",
    "population",
    "employer",
    "sequel",
    "prequel",
    "official residence",
    "birth name",
}

SPECIAL_ROLE_TEMPLATES: dict[str, str] = {
    "birthplace": "Where was {x} born?",
    "birth place": "Where was {x} born?",
    "place of birth": "Where was {x} born?",
    "city of birth": "What city was {x} born in?",
    "country of birth": "What country was {x} born in?",
    "hometown": "What is the hometown of {x}?",
    "place of death": "Where did {x} die?",
    "place of burial": "Where is {x} buried?",
    "date of birth": "When was {x} born?",
    "birthday": "When was {x} born?",
    "date of death": "When did {x} die?",
    "headquarters": "Where is the headquarters of {x}?",
    "country of origin": "What is the country of origin of {x}?",
    "country of citizenship": "What country is {x} a citizen of?",
}

ROLE_PHRASES: tuple[str, ...] = tuple(
    sorted(
        PERSON_ROLE_NOUNS | THING_ROLE_NOUNS | set(SPECIAL_ROLE_TEMPLATES),
        key=lambda p: (-len(p), p),
    )
)


def singular(noun: str) -> str:
    """``directors`` -> ``director``, ``cities`` -> ``city`` (enough for role nouns)."""
    return _singular(noun)


def _singular(noun: str) -> str:
    if noun.endswith("ies") and len(noun) > 4:
        return noun[:-3] + "y"
    if noun.endswith("s") and not noun.endswith("ss"):
        return noun[:-1]
    return noun


def is_person_role(noun: str) -> bool:
    words = _singular(noun.lower())
    return words in PERSON_ROLE_NOUNS or words.split()[-1] in PERSON_ROLE_NOUNS


def role_question(role: str, subject: str, modifiers: str = "") -> str:
    """A hop question for a relational noun: ``("director", "Big Eyes")`` ->
    ``"Who is the director of Big Eyes?"``; ``modifiers`` ("main", "first") are kept."""
    key = role.lower()
    if key in SPECIAL_ROLE_TEMPLATES and not modifiers:
        return SPECIAL_ROLE_TEMPLATES[key].format(x=subject)
    plural = _singular(key) != key and key not in ROLE_PHRASES
    wh = "Who" if is_person_role(key) else "What"
    verb = "are" if plural else "is"
    noun = f"{modifiers} {role}".strip()
    return f"{wh} {verb} the {noun} of {subject}?"


def question_templates() -> list[str]:
    """Every sub-question template the decomposers write (``{x}`` is the subject), without repeats:
    the knowledge-base relations, the special role forms and one question per relational noun.
    The N/A calibration words its probes with them, as real sub-questions are worded."""
    templates = [*KB_RELATIONS.values(), *SPECIAL_ROLE_TEMPLATES.values()]
    templates += [role_question(noun, "{x}") for noun in sorted(PERSON_ROLE_NOUNS | THING_ROLE_NOUNS)]
    return list(dict.fromkeys(templates))

"""Entity mentions of one parsed chunk: detection, naming, merging, pronouns.

Mentions come from spaCy's NER, from matching the document title in the text,
and from runs of proper nouns the NER missed. Mentions with the same
normalised name (and a bare surname of a longer person name) merge into one
entity. Pronouns and definite descriptions ("the film") resolve to the
document's title entity, or to the most recent fitting entity.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from spacy.tokens import Doc, Span, Token

from engramdb.ingestion.extraction.rules_lexicon import (
    ABSTRACT_NOUNS,
    APPROXIMATORS,
    ASPECT_NOUNS,
    FEATURE_NOUNS,
    GROUP_PRONOUNS,
    MEASURE_UNITS,
    MONTH_PATTERN,
    NER_TYPES,
    NOUN_TYPES,
    PERSON_PRONOUNS,
    SPORT_EVENT_HEADS,
    THING_PRONOUNS,
    country_of_demonym,
    party_of_adjective,
    place_kind,
)

_QUOTES = "\"'“”‘’`"
_ORDINAL = re.compile(r"^\d+(?:st|nd|rd|th)$", re.IGNORECASE)
_MAX_NAME_TOKENS = 8


@dataclass
class EntityRecord:
    """An entity being built: its display name, type, roles and aliases."""

    key: str
    name: str
    type: str
    first: int  # first token index, for a stable order
    aliases: list[str] = field(default_factory=list)
    roles: dict[str, list[str]] = field(default_factory=dict)

    def add_alias(self, alias: str) -> None:
        if alias and alias.lower() != self.name.lower() and alias not in self.aliases:
            self.aliases.append(alias)

    def add_role(self, role: str, states: list[str] | None = None) -> None:
        role = role.strip()
        if not role:
            return
        bucket = self.roles.setdefault(role, [])
        for s in states or []:
            if s and s not in bucket:
                bucket.append(s)


def normalise_name(text: str) -> str:
    """Display name of a mention: no leading article, possessive, quotes or stray punctuation."""
    text = re.sub(r"\s+", " ", text).strip().strip(_QUOTES).strip()
    text = re.sub(r"^(?:the|The|THE)\s+", "", text)
    text = re.sub(r"\s*['’]s?$", "", text)
    text = text.strip(" ,;:-–—").strip(_QUOTES).strip()
    text = re.sub(r"(\b[IVX]+)\.$", r"\1", text)  # "World War I." at a sentence end
    return text


def name_key(text: str) -> str:
    return re.sub(r"[^\w]+", " ", normalise_name(text).lower()).strip()


def split_title(title: str | None) -> tuple[str, str | None]:
    """``"Hello Love (song)"`` -> (``"Hello Love"``, ``"song"``)."""
    if not title:
        return "", None
    m = re.match(r"^(.*?)\s*\(([^)]*)\)\s*$", title.strip())
    if m and m.group(1):
        return normalise_name(m.group(1)), m.group(2).strip().lower() or None
    aspect = _ASPECT_TITLE.match(title.strip())
    if aspect and aspect.group(1).split()[-1].lower() in ASPECT_NOUNS:
        return normalise_name(aspect.group(2)), None  # "Climate of Oslo" is about Oslo
    return normalise_name(title), None


# "Climate of Oslo", "Alcohol laws of Utah": a capitalised first word, lowercase others, then "of" and the topic.
_ASPECT_TITLE = re.compile(r"^([A-Z][a-z]+(?:\s+[a-z]+)*)\s+of\s+(?:the\s+)?([A-Z].*)$")


class EntityTable:
    """The entities of one chunk and which tokens mention them."""

    def __init__(self, doc: Doc, title: str | None) -> None:
        self.doc = doc
        self.records: dict[str, EntityRecord] = {}
        self.token_key: dict[int, str] = {}
        self.mention_spans: list[tuple[int, int, str]] = []  # (start, end, key), token offsets
        self.divisions: list[tuple[str, str]] = []  # (numbered division, the place it divides)
        self.title_name, hint = split_title(title)
        if not name_key(self.title_name):
            self.title_name = ""
        self.title_key: str | None = None
        self.title_hint_type = NOUN_TYPES.get(hint.split()[-1]) if hint else None
        self._title_hint_role = hint
        self._build()

    # ----------------------------------------------------------------- building
    def _build(self) -> None:
        doc = self.doc
        spans: list[tuple[int, int, str]] = []  # (start, end, type)
        for ent in _names_cut_at_of(doc, self.title_name):
            etype = NER_TYPES.get(ent.label_)
            if etype is None:
                continue
            start, end = _trim(ent)
            if etype == "DATE":  # "the wettest months are March": the date starts after the verb
                start = max([start, *(t.i + 1 for t in doc[start:end] if t.pos_ in {"AUX", "VERB"})])
                start = _with_day(doc, start)
            while etype in {"PERSON", "ORG"} and end - start > 2 and doc[start].text in _OFFICE_WORDS:
                start += 1  # "Democrat Emanuel Cleaver", "U.S. Senator Pat Harrison": the name is the person
                etype = "PERSON"
            if start < end:
                spans.append((start, end, etype))
        spans = _name_suffixes(doc, _year_events(doc, _split_ranges(doc, _merge_adjacent(doc, spans))))
        spans = _feature_names(doc, _institution_for(doc, _body_names(doc, spans)))
        spans = _numbered_ways(doc, _regional_places(doc, spans), self.title_name) + _kind_phrases(doc, spans)
        quoted = _quoted_titles(doc)
        # mentions named otherwise than their text: "Crawford and Dent counties", "Russell and Ruth Kraus"
        self._names, heads = _shared_plural_heads(doc)
        forced = quoted + [(s, e, "PLACE") for s, e in self._names]
        spans = [
            sp
            for sp in spans
            if not any(sp[0] < e and s < sp[1] for s, e, _t in forced) and not heads & set(range(*sp[:2]))
        ] + forced
        self._blocked = heads
        title_spans = self._title_spans()
        spans = [_through_title(doc, sp, title_spans) for sp in spans]
        kept: list[tuple[int, int, str, bool]] = []
        for s, e, t in spans:
            # a NER mention inside a title match becomes the title
            inside = next(((ts, te) for ts, te in title_spans if ts <= s and e <= te), None)
            if inside is None:
                kept.append((s, e, t, False))
        for ts, te in title_spans:
            if any(s < te and ts < e and not (ts <= s and e <= te) for s, e, _t in spans):
                continue  # a larger NER entity contains the title words: not the title
            etype = next((t for s, e, t in spans if ts == s and e == te), None)
            if etype is None and _has_middle_initial(self.title_name):
                # "Alfred Domingo Herger" for "Alfred D. Herger": the NER's person inside it is the title's
                etype = next((t for s, e, t in spans if ts <= s and e <= te and t == "PERSON"), None)
            kept.append((ts, te, etype or "", True))
        kept.extend((s, e, "THING", False) for s, e in self._proper_runs(kept))
        kept.sort()
        kept = _shared_surnames(self.doc, kept, self._names)
        for start, end, etype, is_title in kept:
            self._add_mention(start, end, etype, is_title)
        self._merge_partial_names()
        self._numbered_divisions()

    def _title_spans(self) -> list[tuple[int, int]]:
        if not self.title_name:
            return []
        variants = _title_variants(self.title_name)
        found: list[tuple[int, int]] = []
        taken: set[int] = set()
        for variant in variants:
            # "West Branch Warner River" is written "the West Branch of the Warner River"
            written = variant.split()
            words = [_title_word(written, i) for i in range(len(written))]
            pattern = r"(?<!\w)" + r"\s+(?:of\s+(?:the\s+)?)?".join(words) + r"(?!\w)"
            for m in re.finditer(pattern, self.doc.text, flags=re.IGNORECASE):
                span = self.doc.char_span(m.start(), m.end(), alignment_mode="expand")
                if span is None or taken.intersection(range(span.start, span.end)):
                    continue
                found.append((span.start, span.end))
                taken.update(range(span.start, span.end))
        return found

    def _proper_runs(self, kept: list[tuple[int, int, str, bool]]) -> list[tuple[int, int]]:
        covered = {i for s, e, _t, _b in kept for i in range(s, e)} | self._blocked
        runs: list[tuple[int, int]] = []
        i = 0
        doc = self.doc
        while i < len(doc):
            if doc[i].pos_ == "PROPN" and i not in covered and doc[i].is_alpha and doc[i].text[:1].isupper():
                j = i
                while j < len(doc) and j not in covered and (doc[j].pos_ == "PROPN" or _inner_hyphen(doc, j)):
                    j += 1
                if all(t.lower_ in NOUN_TYPES for t in doc[i:j]) and i > 0 and doc[i - 1].is_lower:
                    i = j  # "the former Mayor": a capitalised role, not a name
                    continue
                if j - i <= _MAX_NAME_TOKENS and doc[j - 1].dep_ in {
                    "nsubj",
                    "nsubjpass",
                    "dobj",
                    "pobj",
                    "attr",
                    "appos",
                    "conj",
                }:
                    runs.append((i, j))
                i = j
            else:
                i += 1
        return runs

    def _add_mention(self, start: int, end: int, etype: str, is_title: bool) -> None:
        span = self.doc[start:end]
        if is_title:
            key = self._ensure_title(etype or None)
            if span.text.lower() != self.title_name.lower():
                self.records[key].add_alias(normalise_name(span.text))
        else:
            name = normalise_name(self._names.get((start, end), span.text))
            if not name_key(name) or len(name) < 2 or _not_a_name(span, name, etype):
                return
            name, etype, written = _renamed(name, etype)
            key = name_key(name)
            if self.title_key and key == self.title_key:
                pass
            elif key in self.records:
                rec = self.records[key]
                if rec.type == "THING" and etype != "THING":
                    rec.type = etype
            else:
                self.records[key] = EntityRecord(key, name, etype, start)
            self.records[key].add_alias(written)
        for i in range(start, end):
            self.token_key[i] = key
        self.mention_spans.append((start, end, key))

    def _ensure_title(self, etype: str | None = None) -> str:
        if self.title_key is None:
            key = name_key(self.title_name)
            self.title_key = key
            if key in self.records:
                rec = self.records[key]
                rec.name = self.title_name
            else:
                rec = EntityRecord(key, self.title_name, etype or self.title_hint_type or "THING", -1)
                self.records[key] = rec
            if self._title_hint_role:
                rec.add_role(self._title_hint_role)
        rec = self.records[self.title_key]
        if self.title_hint_type:
            rec.type = self.title_hint_type  # "(film)" beats the NER's guess
        elif etype and rec.type == "THING":
            rec.type = etype
        return self.title_key

    def _merge_partial_names(self) -> None:
        """A bare first or last name of a longer PERSON (or title) entity is that entity."""
        multi = [
            r
            for r in self.records.values()
            if len(r.name.split()) > 1 and (r.type == "PERSON" or r.key == self.title_key)
        ]
        title_words = set()
        if self.title_name:
            first_part = self.title_name.split(",")[0].split()
            title_words = {first_part[0].lower(), first_part[-1].lower(), self.title_name.split()[-1].lower()}
        for rec in list(self.records.values()):
            if len(rec.name.split()) != 1 or rec.type not in {"PERSON", "THING", "ORG"}:
                continue
            word = rec.name.lower()
            if rec.key != self.title_key and word in title_words and len(self.title_name.split()) > 1:
                self._redirect(rec.key, self._ensure_title(rec.type))
                continue
            owners = [
                m
                for m in multi
                if m.key != rec.key
                and word in {m.name.split()[0].lower(), m.name.split(",")[0].split()[-1].lower()}
            ]
            if len(owners) == 1:
                self._redirect(rec.key, owners[0].key)

    def _redirect(self, old: str, new: str) -> None:
        if old == self.title_key:
            self.title_key = new  # "Bhaskar" is the bare name of the fuller "Bhaskar Chandavarkar"
        rec = self.records.pop(old)
        self.records[new].add_alias(rec.name)
        if self.records[new].type == "THING" and rec.type != "THING":
            self.records[new].type = rec.type
        self.records[new].first = min(self.records[new].first, rec.first)
        for i, k in list(self.token_key.items()):
            if k == old:
                self.token_key[i] = new
        self.mention_spans = [(s, e, new if k == old else k) for s, e, k in self.mention_spans]

    def _numbered_divisions(self) -> None:
        """``Ohio's 3rd congressional district`` / ``the 1st ward of Leeds``: a numbered part of a place.

        A place noun ("district", "county") with a numeric ordinal before it and a place as its
        owner (a possessive or an "of" object) is a place of its own, named as written; its
        words (not the owner's) mention it, and it lies in the owner.
        """
        for noun in self.doc:
            if NOUN_TYPES.get(noun.lemma_.lower()) != "PLACE" or noun.pos_ not in {"NOUN", "PROPN"}:
                continue
            if noun.i in self.token_key:
                self._named_division(noun)
                continue
            if noun.pos_ != "NOUN":
                continue
            ordinal = next(
                (
                    c
                    for c in noun.children
                    if c.i < noun.i and c.dep_ in {"amod", "nummod"} and _ORDINAL.match(c.text)
                ),
                None,
            )
            if ordinal is None or any(i in self.token_key for i in range(ordinal.i, noun.i)):
                continue
            owner_tok, name_start, name_end = None, ordinal.i, noun.i + 1
            for child in noun.children:
                if child.dep_ == "poss" and child.i < ordinal.i:
                    owner_tok = child
                    name_start = next((s for s, e, _k in self.mention_spans if s <= child.i < e), child.i)
                elif child.dep_ == "prep" and child.lower_ == "of" and owner_tok is None:
                    owner_tok = next((g for g in child.children if g.dep_ == "pobj"), None)
                    if owner_tok is not None:
                        name_end = next(
                            (e for s, e, _k in self.mention_spans if s <= owner_tok.i < e), owner_tok.i + 1
                        )
            owner = self.token_key.get(owner_tok.i) if owner_tok is not None else None
            if owner is None or self.records[owner].type != "PLACE":
                continue
            key = self.add_entity(self.doc[name_start:name_end].text, "PLACE", name_start)
            if key is None or key == owner:
                continue
            for i in range(ordinal.i, noun.i + 1):
                self.token_key[i] = key
            self.mention_spans.append((ordinal.i, noun.i + 1, key))
            self.divisions.append((key, owner))

    def _named_division(self, noun: Token) -> None:
        """``Missouri's 5th Congressional District`` read whole as a name (the NER's, or the title's): it
        still lies in the place its possessive names, which becomes an entity of its own."""
        key = self.token_key[noun.i]
        span = next(((s, e) for s, e, k in self.mention_spans if k == key and s <= noun.i < e), None)
        poss = next((c for c in noun.children if c.dep_ == "poss" and c.i < noun.i), None)
        ordinal = any(c.i < noun.i and _ORDINAL.match(c.text) for c in noun.children)
        if span is None or poss is None or not ordinal or self.records[key].type not in {"PLACE", "THING"}:
            return
        owner = self.token_key.get(poss.i)
        if owner == key:  # the owner's name is inside the division's: "Missouri" alone is a place
            words = [t for t in poss.subtree if t.dep_ != "case"]
            if not all(t.text[:1].isupper() for t in words):
                return
            owner = self.add_entity(" ".join(t.text for t in words), "PLACE", words[0].i)
        if owner is None or owner == key or self.records[owner].type != "PLACE":
            return
        self.records[key].type = "PLACE"
        if (key, owner) not in self.divisions:
            self.divisions.append((key, owner))

    # ----------------------------------------------------------------- lookups
    def key_at(self, tok: Token) -> str | None:
        return self.token_key.get(tok.i)

    def get(self, key: str) -> EntityRecord:
        return self.records[key]

    def add_entity(self, name: str, etype: str, first: int) -> str | None:
        """An entity found outside NER (a life date, a noun phrase); returns its key."""
        name = normalise_name(name)
        key = name_key(name)
        if not key:
            return None
        if key not in self.records:
            self.records[key] = EntityRecord(key, name, etype, first)
        return key

    def measure_at(self, tok: Token, unit_needed: bool = False) -> str | None:
        """The amount ``tok`` belongs to, as a NUMBER entity: "12,741", "113 °F", "218 miles".

        Called only where the grammar makes the amount an attribute's value, so a number becomes an
        entity there and nowhere else. The amount is read from the text, not the parse (which tears
        "113 °F" apart): the first number of ``tok``'s phrase and its units. The amount with its
        approximator ("about 630 millimetres") is an alias; mentions the amount covers (a NER
        "113" or "F") give way to it. Its conversion, cut from the parsed text as an aside, is
        added by the extractor once the relations are read.
        """
        span = measure_span(self.doc, tok)
        if span is None:
            return None
        start, bare_end, end, has_unit = span
        if unit_needed and not has_unit:
            return None
        doc = self.doc
        for s, e, k in self.mention_spans:
            outside = [t for t in doc[s:e] if not start <= t.i < end]
            if s < end and start < e and outside:
                if self.records[k].type != "NUMBER" or any(t.lower_ not in APPROXIMATORS for t in outside):
                    return None  # a name runs into the amount
                start = min(start, s)  # the NER's "only about 885" before "km2": the amount's approximator
        lead = start
        while lead < bare_end and doc[lead].lower_ in APPROXIMATORS:
            lead += 1
        name = tidy_amount(doc[lead:bare_end].text)
        key = self.add_entity(name, "NUMBER", start)
        if key is None:
            return None
        rec = self.records[key]
        if rec.type != "NUMBER":
            if any(k == key and not (start <= s and e <= end) for s, e, k in self.mention_spans):
                return None  # a name elsewhere that merely reads like the amount
            rec.type, rec.name = "NUMBER", name  # the NER's "− 4 ° C" as a person
        if end > bare_end:
            rec.add_alias(tidy_amount(doc[lead:end].text).replace("( ", "(").replace(" )", ")"))
        while start > 0 and doc[start - 1].lower_ in APPROXIMATORS:
            start -= 1
        for i in range(start, lead):  # "only about 885 km2", "about 885 km2"
            rec.add_alias(f"{doc[i:lead].text} {name}")
        self.mention_spans = [sp for sp in self.mention_spans if not (start <= sp[0] and sp[1] <= end)]
        bisect.insort(self.mention_spans, (start, end, key))
        for i in range(start, end):
            self.token_key[i] = key
        return key

    def entity_ending_at(self, char_offset: int) -> str | None:
        """The entity whose mention ends right before ``char_offset`` (where an aside was cut)."""
        for _start, end, key in self.mention_spans:
            last = self.doc[end - 1]
            if char_offset - 1 <= last.idx + len(last.text) <= char_offset:
                return key
        return None

    def title(self, etype: str | None = None) -> str | None:
        if not self.title_name:
            return None
        return self._ensure_title(etype)

    def resolve_pronoun(self, tok: Token) -> str | None:
        """The entity a pronoun refers to: the title entity when it fits, else the latest fitting one."""
        low = tok.lower_
        if low in PERSON_PRONOUNS:
            partner = self._conjoined_owner(tok)
            if partner is not None:
                return partner
            if self.title_name:
                rec = self.records.get(self.title_key) if self.title_key else None
                if rec is not None and rec.type == "PERSON" or self._may_be_person_topic(rec):
                    return self._ensure_title("PERSON")
                if not self.title_hint_type and _personal_name(self.title_name):
                    rec.type = "PERSON"  # "he" in the article "Horace Parlan": the NER's ORG was wrong
                    return self.title_key
            if tok.tag_ == "PRP$":  # "son of A and his wife B": the person just named in its sentence
                named = self._latest(tok, {"PERSON"}, lambda span: span.start >= tok.sent.start)
                if named is not None:
                    return named
            return self._latest_subject(tok) or self._latest(tok, {"PERSON"})
        if low in THING_PRONOUNS:
            if self.title_name:
                rec = self.records.get(self.title_key) if self.title_key else None
                if rec is None or rec.type not in {"PERSON", "DATE", "NUMBER"}:
                    return self._ensure_title()
            return self._latest(tok, {"ORG", "PLACE", "WORK", "EVENT", "PRODUCT", "LAW", "THING"})
        if low in GROUP_PRONOUNS and self.title_key:
            rec = self.records[self.title_key]
            if rec.type == "ORG":
                return self.title_key
        return None

    def _may_be_person_topic(self, rec: EntityRecord | None) -> bool:
        """An untyped topic "he" may stand for: not one a lowercase content word shows to be a
        concept ("Tidal drift ... his theory": "his" is the theory's author, named before)."""
        if rec is not None and rec.type != "THING":
            return False
        words = self.title_name.split()
        return (
            self.title_hint_type in {None, "PERSON"}
            and not any(w[:1].islower() and w not in _NAME_PARTICLES for w in words)
            and not any(w in _TITLE_ONLY_WORDS for w in words)
        )

    def resolve_definite(self, tok: Token) -> str | None:
        """``the film`` / ``the company`` -> the title entity when the noun fits it."""
        if tok.pos_ != "NOUN" or not self.title_name:
            return None
        dets = [c.lower_ for c in tok.children if c.dep_ in {"det", "poss"}]
        if not dets or dets[0] not in {"the", "this"}:
            return None
        noun = tok.lemma_.lower()
        rec = self.records.get(self.title_key) if self.title_key else None
        if rec is not None and (noun in rec.roles or any(r.split()[-1] == noun for r in rec.roles)):
            return self.title_key
        noun_type = NOUN_TYPES.get(noun)
        if noun_type and noun_type != "PERSON":
            if rec is None and self.title_hint_type == noun_type:
                return self._ensure_title(noun_type)
            if rec is not None and rec.type == noun_type:
                return self.title_key
            if rec is not None and rec.type == "THING" and not self.title_hint_type:
                rec.type = noun_type  # "the series" in an article whose topic had no type yet
                return self.title_key
        if noun in ABSTRACT_NOUNS and tok.dep_ in {"nsubj", "nsubjpass"} and self.title_name:
            # "The concept was developed by ..." in the article on that concept
            if rec is None or rec.type not in {"PERSON", "PLACE", "DATE", "NUMBER"}:
                return self._ensure_title()
        if noun_type in _ANTECEDENT_TYPES:
            return self._recent_of_type(tok, noun_type)
        return None

    def _recent_of_type(self, tok: Token, etype: str) -> str | None:
        """``He founded X in 1920. The company was sold in 1950.``: the last work or body named in
        this sentence or the one before is what "the company" / "the film" takes up, when the topic
        is not of its kind."""
        earliest = self._previous_sentence_start(tok)
        return self._latest(tok, {etype}, lambda span: span.start >= earliest)

    def _previous_sentence_start(self, tok: Token) -> int:
        """Where the sentence before ``tok``'s begins (its own, for the first): the reach of "he" and
        of "the company" back to what they take up."""
        return self.doc[tok.sent.start - 1].sent.start if tok.sent.start > 0 else tok.sent.start

    def _latest_subject(self, tok: Token) -> str | None:
        """The person last named as a subject (or in apposition to one) in this sentence or the one
        before: "he", and a "his" that opens its sentence, continue what a sentence is about more
        often than they point to the last name read ("The governor, Hopper, has to replace Senator
        Foley. He chooses ...": Hopper). A "his" after a person named in its own sentence is that
        person's ("the son of A and his wife B")."""
        earliest = self._previous_sentence_start(tok)

        def subject(span: Span) -> bool:
            head = span.root
            if head.sent.start < earliest:
                return False
            if head.dep_ == "appos":
                head = head.head
            return head.dep_ in {"nsubj", "nsubjpass"}

        return self._latest(tok, {"PERSON"}, subject)

    def _conjoined_owner(self, tok: Token) -> str | None:
        """``the son of A and his wife B``: a "his" whose noun is conjoined to a named person is that
        person's, whoever the article is about."""
        noun = tok.head
        if tok.tag_ != "PRP$" or noun.dep_ != "conj":
            return None
        key = self.key_at(noun.head)
        rec = self.records.get(key) if key else None
        return key if rec is not None and rec.type == "PERSON" else None

    def _latest(self, tok: Token, types: set[str], where: Callable[[Span], bool] | None = None) -> str | None:
        """The entity of ``types`` mentioned last before ``tok`` (of the mentions ``where`` accepts)."""
        best: str | None = None
        for start, end, key in self.mention_spans:
            if start >= tok.i:
                break
            rec = self.records.get(key)
            if rec is not None and rec.type in types and (where is None or where(self.doc[start:end])):
                best = key
        return best


# Kinds whose "the <noun>" takes up the last one named, when the article's topic is of another kind.
_ANTECEDENT_TYPES = frozenset({"WORK", "ORG"})
# Lowercase words inside personal names ("Mary, Queen of Scots", "Ludwig van Beethoven").
# Function words of a work's title ("Mr. Smith Goes to Washington") are no sign of a concept either.
_NAME_PARTICLES = frozenset(
    "of de du da das dos van von der den la le al bin ibn y zu to the a an in on at for and or with from by".split()
)
# Function words a work's title may hold but a personal name does not ("Mr. Smith Goes to Washington"
# is no one "he" can stand for; "Alfred the Great", "Catherine of Aragon" and "George II, Prince of
# Waldeck and Pyrmont" are people).
_TITLE_ONLY_WORDS = frozenset("to a an in on at for with from by".split())
_OFFICE_WORDS = frozenset(
    "Democrat Republican Democratic U.S. US Senator Representative Congressman Congresswoman Governor Mayor "
    "Rep. Sen. Gov.".split()
)
_TIME_WORDS = frozenset(
    "january february march april may june july august september october november december jan feb mar apr "
    "jun jul aug sep sept oct nov dec spring summer autumn fall winter monday tuesday wednesday thursday "
    "friday saturday sunday century centuries bc bce ad ce christmas easter".split()
)


_DECADE = re.compile(r"\b\d{0,3}0['’]?s\b")


def _not_a_name(span: Span, name: str, etype: str) -> bool:
    """NER mentions that name nothing: "the hottest month", "through the years", "the final one"."""
    if etype == "DATE":
        return (
            not any(t.like_num for t in span)
            and not _TIME_WORDS.intersection(name.lower().split())
            and not _DECADE.search(name)  # "the 1830s": a time as plain as a year
        )
    if etype == "NUMBER" and name.lower() == "one":
        return span.root.dep_ != "nummod"  # "the third and final one": a pronoun, not the number
    if len(span) == 1 and NOUN_TYPES.get(name.lower()) == "PERSON" and span.start > 0:
        return span.doc[span.start - 1].is_lower  # "The current Representative": an office, not a name
    return False


def _renamed(name: str, etype: str) -> tuple[str, str, str]:
    """(name, type, name as written): the name a model gives what the text names otherwise.

    A party by its adjective ("a Democrat") is the party ("Democratic Party"); an amount with a
    focus word ("only 20 km") is the amount; a place with a trailing generic noun ("Kerala state")
    keeps its written name, and the bare name is added as an alias by the caller's record; a
    name the NER took for a body but closing with a lowercase "state" or "province" is such a place.
    """
    party = party_of_adjective(name) if etype == "NORP" else None
    if party:
        return party, "ORG", name
    if etype == "NUMBER":
        bare = re.sub(r"^(?:only|just|some)\s+(?=[\d−-])", "", name)
        return bare, etype, name if bare != name else ""
    if etype in {"ORG", "THING"} and _DIVISION_TAIL.search(name):
        etype = "PLACE"  # "Maharashtra state": a body or thing is never named by a lowercase "state"
    if etype == "PLACE":
        bare = _GENERIC_TAIL.sub("", name)
        return name, etype, bare if bare != name and bare[:1].isupper() else ""
    return name, etype, ""


# A lowercase division noun closing a name the NER took for a body ("Maharashtra state" as ORG).
_DIVISION_TAIL = re.compile(r"[A-Z]\S*\s+(?:state|province|prefecture)$")
# Lowercase generic nouns closing a place's written name ("Kerala state", "the Tarn mountains").
_GENERIC_TAIL = re.compile(
    r"(?:\s+(?:state|province|region|prefecture|" + "|".join(sorted(FEATURE_NOUNS)) + r"))+$"
)


def _personal_name(name: str) -> bool:
    """``Horace Parlan``: two to four capitalised words, none a common noun of places, works or bodies."""
    words = name.split()
    return (
        2 <= len(words) <= 4
        and all(w[:1].isupper() and w.replace(".", "").replace("-", "").isalpha() for w in words)
        and not any(w.lower() in NOUN_TYPES for w in words)
    )


# Words a mention does not start with: articles, and possessives ("its first week" is "first week").
_LEADING = frozenset({"the", "a", "an", "his", "her", "its", "their", "my", "our", "your"})


def _middle_initial(words: list[str], i: int) -> bool:
    """Word ``i`` of a title is an initial between two words ("D." in "Zachary D. Massey"); not the
    first or last word, so "J. Smith" is not "John Smith" nor "Smith J." anyone."""
    return 0 < i < len(words) - 1 and re.fullmatch(r"[A-Z]\.", words[i]) is not None


def _has_middle_initial(title: str) -> bool:
    words = title.split()
    return any(_middle_initial(words, i) for i in range(len(words)))


def _title_word(words: list[str], i: int) -> str:
    """The pattern of one word of the title. A middle initial stands for the name it shortens: the
    article "Zachary D. Massey" opens on "Zachary David Massey", who is the article's topic."""
    if _middle_initial(words, i):
        return rf"{words[i][0]}(?:\.|[a-z]+)"
    return re.escape(words[i])


def _title_variants(title: str) -> list[str]:
    """How a text may write its document's title: whole, and its part before a comma ("Weston" for
    "Weston, Ontario")."""
    if not title:
        return []
    return [title, title.split(",")[0].strip()] if "," in title else [title]


def _through_title(
    doc: Doc, span: tuple[int, int, str], title_spans: list[tuple[int, int]]
) -> tuple[int, int, str]:
    """A mention that starts inside a mention of the title and runs on past it is one name from
    the title's first word: in the article "Christ Church", the NER reads "Christ | Church Parish"
    (a person), and the parish is "Christ Church Parish". Typed by its last word when that is a kind
    of thing ("Parish": a place), else as the NER typed it."""
    start, end, etype = span
    for ts, te in title_spans:
        # a title matched in lower case names nothing there ("recorded at the Rainbow Theatre" in
        # the article "At the Rainbow")
        if ts < start < te < end and doc[ts].text[:1].isupper():
            return ts, end, NOUN_TYPES.get(doc[end - 1].lower_, etype)
    return span


#: NER labels of names (not dates, amounts or ordinals), which can end a name cut at "of".
_NAMED_LABELS = frozenset(
    {"PERSON", "ORG", "GPE", "LOC", "FAC", "NORP", "EVENT", "WORK_OF_ART", "LAW", "PRODUCT"}
)


def _names_cut_at_of(doc: Doc, title: str) -> list[Span]:
    """The NER's mentions, with one it ended on "of" joined to the mention right after it: "the
    Province of | Maryland", "the Communist Party of | Cuba", "the Art Students League of | New York"
    are one name each, typed as the first part (trimmed of its "of", the first part named a different
    thing, and the second lost its place in the first: "one of the original parishes in Province").
    Not when the first part opens in lower case ("west of | Carolina" is a direction, not a name),
    nor when it or the whole is the document's title (the title rules name it, and type it: "Dulce
    of | Aragon", two organisations to the NER, made the article's queen an organisation that "she"
    could not be), nor when it is a person ("a Duke of | Żagań-Przewóz" became a person beside the
    article's duke)."""
    titles = {t.lower() for t in _title_variants(title)}
    ents = list(doc.ents)
    out: list[Span] = []
    i = 0
    while i < len(ents):
        ent = ents[i]
        after = ents[i + 1] if i + 1 < len(ents) else None
        opening = next((t for t in ent if t.lower_ not in _LEADING), None)
        if (
            after is not None
            and len(ent) > 1
            and ent[-1].lower_ == "of"
            and after.start == ent.end
            and after.label_ in _NAMED_LABELS  # not "Rosary of | one hundred and one", "Convention of | 1850"
            and ent.label_ != "PERSON"  # "Queen Petronila of | Aragon" took "she" from the article's queen
            and opening is not None
            and opening.text[:1].isupper()
            and not titles
            & {doc[opening.i : ent.end - 1].text.lower(), doc[opening.i : after.end].text.lower()}
        ):
            out.append(Span(doc, ent.start, after.end, label=ent.label_))
            i += 2
            continue
        out.append(ent)
        i += 1
    return out


def _trim(ent: Span) -> tuple[int, int]:
    start, end = ent.start, ent.end
    doc = ent.doc
    while start < end and (doc[start].lower_ in _LEADING or doc[start].is_punct):
        start += 1
    while end > start and (
        doc[end - 1].tag_ == "POS"
        or doc[end - 1].is_punct
        and doc[end - 1].text != "."
        or doc[end - 1].pos_ in {"ADP", "CCONJ"}
        and doc[end - 1].is_lower  # "Rude in", "the 1880s and"
    ):
        end -= 1
    return start, end


_MONTH_WORD = re.compile(MONTH_PATTERN)


def _with_day(doc: Doc, start: int) -> int:
    """A date's start moved back over its day: the NER reads "on 2 September 1945" as "September 1945".

    Only a bare number 1-31 right before a month name is taken, so "1945 September" or "12 of
    September" stay as they are; the day is what a "when" question about an event asks for.
    """
    day = doc[start - 1] if start > 0 else None
    if (
        day is not None
        and _MONTH_WORD.fullmatch(doc[start].text)
        and doc[start].text[:1].isupper()
        and re.fullmatch(r"\d{1,2}", day.text)
        and 1 <= int(day.text) <= 31
    ):
        return start - 1
    return start


def _inner_hyphen(doc: Doc, i: int) -> bool:
    """A hyphen glued to capitalised words on both sides ("Nine-Power"): part of the name."""
    return (
        doc[i].text == "-"
        and 0 < i < len(doc) - 1
        and not doc[i - 1].whitespace_
        and not doc[i].whitespace_
        and doc[i + 1].text[:1].isupper()
    )


_JOINABLE = {"ORG", "PLACE", "EVENT", "WORK", "LAW", "PRODUCT"}


def _merge_adjacent(doc: Doc, spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """One name the NER split in two: "the United States | Senate", "2000 | Summer Olympics", "Nine-|Power Treaty".

    Two touching mentions merge when the last word of the first modifies a word of the second
    (a compound or a year before an event or organisation); the second mention's type wins.
    A mention also takes in capitalised words hyphen-glued before it.
    """
    spans = sorted(spans)
    out: list[tuple[int, int, str]] = []
    for start, end, etype in spans:
        while start >= 2 and _inner_hyphen(doc, start - 1) and doc[start - 2].is_alpha:
            if out and out[-1][1] > start - 2:
                break
            start -= 2
        if out and etype in _JOINABLE:
            p_start, p_end, p_type = out[-1]
            last = doc[p_end - 1]
            joined = (
                p_end == start
                and start <= last.head.i < end
                and (
                    p_type in _JOINABLE
                    and last.dep_ in {"compound", "nummod"}
                    or p_type == "DATE"
                    and p_end - p_start == 1
                    and re.fullmatch(r"\d{4}", last.text)
                )
            )
            if joined:
                out[-1] = (p_start, end, etype)
                continue
        if out and _demonym_place(doc, out[-1], (start, end, etype)):
            out[-1] = (out[-1][0], end, "PLACE")
            continue
        out.append((start, end, etype))
    return out


def _demonym_place(doc: Doc, first: tuple[int, int, str], second: tuple[int, int, str]) -> bool:
    """``French Polynesia`` / ``British Columbia``: the NER reads a one-word place after a nationality
    adjective as a nationality and a place, but an adjective glued to a one-word place name is
    part of the name. Only a place the NER typed so ("the first Ottoman Sultan" is no place), not
    after an article ("the Russian Vostok Station" names the station without it), nor before a
    country or state ("American Texas")."""
    (f_start, f_end, f_type), (s_start, s_end, s_type) = first, second
    if f_type != "NORP" or f_end != s_start or f_end - f_start != 1 or s_end - s_start != 1:
        return False
    adjective, name = doc[f_start], doc[s_start]
    if s_type != "PLACE" or adjective.head.i != name.i or name.pos_ != "PROPN":
        return False
    if f_start > 0 and doc[f_start - 1].lower_ in {"the", "a", "an"}:
        return False
    return country_of_demonym(adjective.text) is not None and place_kind(name.text) is None


_QUOTED_RE = re.compile(r'"([A-Z0-9][^"]{0,80}?)"|“([A-Z0-9][^”]{0,80}?)”')


def _quoted_titles(doc: Doc) -> list[tuple[int, int, str]]:
    """``"Mr. Belvedere Goes to College"``: a capitalised title in quotes is one work, whatever the NER split."""
    out: list[tuple[int, int, str]] = []
    for m in _QUOTED_RE.finditer(doc.text):
        before, after = doc.text[: m.start()].split()[-1:], doc.text[m.end() :].split()[:1]
        if before and after and before[0][:1].isupper() and after[0][:1].isupper():
            continue  # 'Hubert "Happy" Hopper': a nickname inside a name
        group = 1 if m.group(1) is not None else 2
        span = doc.char_span(m.start(group), m.end(group), alignment_mode="expand")
        if span is None or not 1 <= len(span) <= _MAX_NAME_TOKENS or span.text.rstrip(",.").endswith(" "):
            continue
        words = [t for t in span if t.is_alpha]
        if not words or sum(t.text[:1].isupper() for t in words) * 2 < len(words):
            continue  # a quoted phrase or sentence, not a title
        out.append((span.start, span.end, "WORK"))
    return out


_PLURAL_PLACE_HEADS = {  # plural as written -> the head each listed name takes
    "counties": "County",
    "rivers": "River",
    "islands": "Island",
    "provinces": "Province",
    "lakes": "Lake",
    "streets": "Street",
    "districts": "District",
    "townships": "Township",
    "parishes": "Parish",
}


def _shared_plural_heads(doc: Doc) -> tuple[dict[tuple[int, int], str], set[int]]:
    """``Crawford, Dent and Washington counties``: each listed name with the shared head, "Dent County".

    Returns the name spans with their full names, and the plural head words (no entities themselves).
    """
    out: dict[tuple[int, int], str] = {}
    heads: set[int] = set()
    for tok in doc:
        head = _PLURAL_PLACE_HEADS.get(tok.lower_) or _head_of_others(tok)
        if head is None:
            continue
        firsts = [c for c in tok.children if c.dep_ in {"nmod", "compound", "amod"} and c.pos_ == "PROPN"]
        if tok.dep_ == "conj" and tok.head.pos_ == "PROPN" and tok.head.i < tok.i:
            firsts.append(tok.head)  # "in Guilford and Rockingham Counties": the parser's other reading
        members = sorted(
            {
                m.i: m
                for first in firsts
                for m in (first, *first.conjuncts)
                if m.pos_ == "PROPN" and m.i < tok.i
            }.values(),
            key=lambda m: m.i,
        )
        if len(members) < 2:
            members = _listed_after(tok)
        if len(members) < 2:
            continue  # one name before a plural head is a name of its own: "the Windward Islands"
        for member in members:
            start = member.i
            while start > 0 and doc[start - 1].dep_ == "compound" and doc[start - 1].head.i == member.i:
                start -= 1
            out[(start, member.i + 1)] = f"{doc[start : member.i + 1].text} {head}"
            heads.add(tok.i)
    return out, heads


def _head_of_others(tok: Token) -> str | None:
    """``four counties -- ... -- and three others -- Tull and Brand``: "others" stands for the kind
    the plural head before it in the sentence named, so its listed names take that head too."""
    if tok.lower_ != "others":
        return None
    for prev in reversed(tok.doc[tok.sent.start : tok.i]):
        if prev.lower_ in _PLURAL_PLACE_HEADS:
            return _PLURAL_PLACE_HEADS[prev.lower_]
    return None


def _listed_after(head: Token) -> list[Token]:
    """``four counties -- Harl, Denby and Moss``: the proper nouns a list in apposition to a plural
    place head names, in order (each a member of that kind); empty when no such list follows."""
    firsts = [c for c in head.children if c.dep_ == "appos" and c.pos_ == "PROPN" and c.i > head.i]
    return sorted(
        {m.i: m for first in firsts for m in (first, *first.conjuncts) if m.pos_ == "PROPN"}.values(),
        key=lambda m: m.i,
    )


_RANGE_WORDS = {"to", "and", "until", "till", "through", "-", "–", "—", "--", "between", "from"}


def _split_ranges(doc: Doc, spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """``from 1951 to 1957`` / ``between 1952 and 1957``: two dates, each an entity (a model names each)."""
    out: list[tuple[int, int, str]] = []
    for start, end, etype in spans:
        parts: list[tuple[int, int]] = []
        if etype == "DATE":
            part_start = start
            for i in range(start, end):
                if doc[i].lower_ in _RANGE_WORDS:
                    if part_start < i:
                        parts.append((part_start, i))
                    part_start = i + 1
            if part_start < end:
                parts.append((part_start, end))
        if len(parts) > 1 and all(
            any(t.like_num or _DECADE.fullmatch(t.text) for t in doc[a:b]) for a, b in parts
        ):
            out.extend((a, b, "DATE") for a, b in parts)
        else:
            out.append((start, end, etype))
    return out


# Nouns that a year before them turns into a named event: "the 2010 census", "the 1942 Democratic primary".
_YEAR_EVENTS = frozenset(
    "census election elections primary referendum season championship championships tournament "
    "draft festival games olympics expedition campaign".split()
)


def _year_events(doc: Doc, spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """``the 2010 census``: a year and the event noun it dates are one event, as a model names it."""
    out: list[tuple[int, int, str]] = []
    taken: set[int] = set()
    for start, end, etype in spans:
        year = doc[start]
        head = year.head
        if (
            etype == "DATE"
            and end - start == 1
            and re.fullmatch(r"\d{4}", year.text)
            and year.dep_ in {"nummod", "compound", "amod"}
            and head.lemma_.lower() in _YEAR_EVENTS
            and 0 < head.i - start <= 3
            and all(t.dep_ in {"amod", "compound"} for t in doc[start + 1 : head.i])
        ):
            out.append((start, head.i + 1, "EVENT"))
            taken.update(range(start, head.i + 1))
        else:
            out.append((start, end, etype))
    return [
        sp for sp in out if sp[2] == "EVENT" and sp[1] - sp[0] > 1 or not taken & set(range(sp[0], sp[1]))
    ]


def _body_names(doc: Doc, spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """``the United States | House of Representatives``: a place the NER cut off the body it names.

    A place mention whose last word modifies a capitalised proper noun right after it, which no
    mention covers, runs on through that noun and a capitalised "of" name hanging on it; the
    whole is an organisation.
    """
    covered = {i for s, e, _t in spans for i in range(s, e)}

    def free_name_word(i: int) -> bool:  # a capitalised proper noun no mention covers
        return doc[i].pos_ == "PROPN" and doc[i].text[:1].isupper() and i not in covered

    out: list[tuple[int, int, str]] = []
    for start, end, etype in spans:
        head = doc[end - 1].head if end < len(doc) else None
        if (
            etype in {"PLACE", "ORG"}
            and head is not None
            and doc[end - 1].dep_ == "compound"
            and head.i >= end
            and head.pos_ == "PROPN"
            and head.dep_ != "compound"  # "Hollywood B movies": the run must end the name
            and all(free_name_word(i) for i in range(end, head.i + 1))
        ):
            new_end = head.i + 1
            of = next(
                (c for c in head.children if c.dep_ == "prep" and c.lower_ == "of" and c.i == new_end), None
            )
            if of is not None:
                j = of.i + 1
                while j < len(doc) and free_name_word(j):
                    j += 1
                if j > of.i + 1 and doc[j - 1].head.i == of.i:
                    new_end = j
            out.append((start, new_end, "ORG"))
        else:
            out.append((start, end, etype))
    return out


#: Head nouns of an institution's name that a "for" phrase continues ("Bob Rumball Centre for the Deaf").
INSTITUTION_NOUNS = frozenset(
    "Centre Center Institute School Society Foundation Association Home Hospital Museum College Academy "
    "Council Committee Commission League Fund Trust Organization Organisation Office Agency Church".split()
)


def _institution_for(doc: Doc, spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """``the Bob Rumball Centre | for the Deaf``: an institution's name the NER ended at its head noun
    runs on through a "for" phrase of capitalised words no mention covers (what the place is for is
    part of its name: "Institute for Advanced Study", "School for the Blind")."""
    covered = {i for s, e, _t in spans for i in range(s, e)}
    out: list[tuple[int, int, str]] = []
    for start, end, etype in spans:
        j = end + 1
        if (
            etype in {"ORG", "PLACE"}
            and doc[end - 1].text in INSTITUTION_NOUNS
            and end < len(doc)
            and doc[end].lower_ == "for"
        ):
            if j < len(doc) and doc[j].lower_ == "the":
                j += 1
            k = j
            while (
                k < len(doc)
                and k - j < 5
                and doc[k].text[:1].isupper()
                and doc[k].is_alpha
                and k not in covered
            ):
                k += 1
            if k > j:
                out.append((start, k, "ORG"))
                continue
        out.append((start, end, etype))
    return out


# Direction adjectives that mark a part of a place: "southern Manchuria" is a region a model names.
_REGION_WORDS = frozenset(
    "northern southern eastern western northeastern northwestern southeastern southwestern".split()
)


def _kind_phrases(doc: Doc, spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Common-noun phrases a model takes for entities when a relation's object: the climate a
    place has ("has a humid subtropical climate") and the sporting event a person competes in
    ("competed in the long jump"); without a mention the relation was lost.

    The phrase is the head noun with the modifiers before it (at least one for a climate); no
    mention may overlap it.
    """
    covered = {i for s, e, _t in spans for i in range(s, e)}
    out: list[tuple[int, int, str]] = []
    for noun in doc:
        if noun.pos_ != "NOUN" or not noun.is_lower:
            continue
        lemma = noun.lemma_.lower()
        climate = lemma == "climate" and noun.dep_ == "dobj" and noun.head.lemma_ == "have"
        first = noun
        while first.dep_ == "conj" and first.head.i < first.i:  # "in the long jump and triple jump"
            first = first.head
        sport = lemma in SPORT_EVENT_HEADS and first.dep_ == "pobj" and first.head.lower_ == "in"
        if not climate and not sport:
            continue
        start = _modifiers_start(noun)
        if (climate and start == noun.i) or covered.intersection(range(start, noun.i + 1)):
            continue
        out.append((start, noun.i + 1, "THING"))
    return out


def _modifiers_start(noun: Token) -> int:
    """The first word of the adjectives, nouns and possessive nouns (with their "'s") that run
    unbroken up to ``noun`` and modify it: "tropical wet and dry", "men's high"."""
    doc = noun.doc
    start = noun.i
    while start > 0:
        prev = doc[start - 1]
        if prev.tag_ == "POS" and start - 2 >= 0 and doc[start - 2].dep_ == "poss":
            start -= 2
        elif (
            prev.dep_ in {"amod", "compound", "cc", "conj", "nmod", "poss"}
            and prev.is_lower
            and (prev.head.i >= start or prev.dep_ == "cc")
        ):
            start -= 1
        else:
            break
    while start < noun.i and doc[start].dep_ == "cc":
        start += 1
    return start


def _placed_after(doc: Doc, end: int, starts: set[int]) -> bool:
    """A mention after ``, `` or ``in (the)`` places the one ending at ``end`` in another place."""
    if end + 1 < len(doc) and doc[end].text == "," and end + 1 in starts:
        return True
    return end < len(doc) and doc[end].lower_ == "in" and bool({end + 1, end + 2} & starts)


def _regional_places(doc: Doc, spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """``moved to southern Manchuria``: a direction adjective on a place names a region of it, the
    place a model names (the NER leaves the adjective out, so the verb's object was the whole place).

    Not in a comma chain ("southern Kent, England"), nested places ("in eastern Kent in England") or
    a list ("in northern Kent and southern Essex"), where a model names the places themselves. The
    region is no located fact of its own: a model rarely says it lies in the place.
    """
    starts = {s for s, _e, _t in spans}
    out: list[tuple[int, int, str]] = []
    for start, end, etype in spans:
        adj = doc[start - 1] if start > 0 else None
        if (
            etype == "PLACE"
            and adj is not None
            and adj.lower_ in _REGION_WORDS
            and adj.is_lower
            and adj.dep_ == "amod"
            and start <= adj.head.i < end
            and adj.i not in starts
            and not _placed_after(doc, end, starts)
            and not adj.head.conjuncts  # not a member of a list ("A and B")
        ):
            start -= 1
        out.append((start, end, etype))
    return out


#: Capitalised nouns that a number after them makes a name: "Route 66", "Texas District 16".
_NUMBERED_WAYS = frozenset({"Route", "Highway", "Interstate", "District", "Road", "Channel"})


def _numbered_ways(doc: Doc, spans: list[tuple[int, int, str]], title: str) -> list[tuple[int, int, str]]:
    """``North Carolina Highway 150`` / ``U.S. Route 66`` / ``Texas District 16``: a road or district
    numbered after a name is one place, the name and the number included. The NER reads "North
    Carolina" and "150" apart and leaves "Highway" out, so the park lay off North Carolina, and
    "Texas District 16" was "Texas District", the district's number lost. A bare "District 9" in the
    article "Ohio's 9th district" is the article's own district, which the title rules name."""
    out = list(spans)
    for tok in doc[:-1]:
        number = doc[tok.i + 1]
        if tok.text not in _NUMBERED_WAYS or number.tag_ != "CD" or not number.text[:1].isdigit():
            continue
        end = number.i + 1
        start = tok.i
        before = next((sp for sp in out if sp[1] == tok.i or sp[0] <= tok.i < sp[1]), None)
        if before is not None and before[2] in {"PLACE", "ORG"}:
            start = before[0]
        elif tok.text.lower() in title.lower() and re.search(
            rf"\b{re.escape(number.text)}(?:st|nd|rd|th)?\b", title
        ):
            continue
        if any(s <= tok.i and end <= e for s, e, _t in out):
            continue  # the NER has it whole ("Interstate 95")
        out = [sp for sp in out if sp[1] <= start or end <= sp[0]] + [(start, end, "PLACE")]
    return sorted(out)


def _feature_names(doc: Doc, spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """``the Tarn mountains`` / ``Velm district``: proper nouns compounded into a lowercase noun of
    the land or water name one place, the generic noun included.

    The NER leaves the generic noun out (or tags the proper nouns a person), so the phrase's head,
    which the parser makes the preposition's object, named no entity and the place was lost. The
    proper nouns must run unbroken up to the noun, each modifying a later word of the run, and no
    mention may reach across the run's edges; mentions inside it give way.
    """
    out = list(spans)
    for noun in doc:
        if noun.pos_ != "NOUN" or not noun.is_lower or noun.lemma_ not in FEATURE_NOUNS:
            continue
        start = _name_run_start(doc, noun)
        if start is None or any(
            s < noun.i + 1 and start < e and not (start <= s and e <= noun.i) for s, e, _t in out
        ):
            continue
        out = [sp for sp in out if not (start <= sp[0] and sp[1] <= noun.i)]
        out.append((start, noun.i + 1, "PLACE"))
    return sorted(out)


def _name_run_start(doc: Doc, noun: Token) -> int | None:
    """The first word of the capitalised proper nouns (with glued hyphens and lowercase generic nouns
    between them and ``noun``, as in "the Arn-Tol mountain range") that modify ``noun``; None when
    none do, or when a proper noun before them leaves the name's start in doubt."""
    start = noun.i
    while start > 0:
        prev = doc[start - 1]
        inside = start - 1 < prev.head.i <= noun.i
        if _name_word(prev) and inside:
            start -= 1
        elif _inner_hyphen(doc, start - 1) or prev.is_lower and prev.lemma_ in FEATURE_NOUNS and inside:
            start -= 1
        else:
            break
    while start < noun.i and not _name_word(doc[start]):
        start += 1  # the run opens with a name, not a hyphen or a generic noun
    before = doc[start - 1] if start > 0 else None
    if (
        start == noun.i
        or before is not None
        and (before.pos_ == "PROPN" or before.lower_ in {"a", "an"} or before.tag_ == "POS")
    ):
        return None  # "a Tarn district" is one of a kind; in "Leeds's Holt district" the owner places it
    if doc[start].pos_ == "ADJ" and (before is None or before.lower_ != "the"):
        return None  # "Federal district": an adjective names a place only after "the"
    return start


def _name_word(tok: Token) -> bool:
    """A capitalised proper noun, or a capitalised adjective that is no nationality ("the Ostrian
    mountains" is a name; "the Russian mountains" are mountains in Russia)."""
    return tok.text[:1].isupper() and (
        tok.pos_ == "PROPN"
        or tok.pos_ == "ADJ"
        and not tok.is_sent_start
        and country_of_demonym(tok.text) is None
    )


_SUFFIXES = frozenset({"Sr.", "Jr.", "Sr", "Jr", "II", "III", "IV"})


def _name_suffixes(doc: Doc, spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """``Tom Hale, Jr.``: a generational suffix after a person's name is part of it, not a name of its own."""
    out: list[tuple[int, int, str]] = []
    for start, end, etype in spans:
        if etype == "PERSON" and end < len(doc):
            step = 2 if doc[end].text == "," and end + 1 < len(doc) else 1
            if doc[end + step - 1].text in _SUFFIXES:
                end += step
                if end < len(doc) and doc[end].text == "." and not doc[end - 1].whitespace_:
                    end += 1  # "Sr" "." split by the tokenizer
        out.append((start, end, etype))
    return out


def _shared_surnames(
    doc: Doc, kept: list[tuple[int, int, str, bool]], names: dict[tuple[int, int], str]
) -> list[tuple[int, int, str, bool]]:
    """``Russell and Ruth Goetz Kraus``: a lone first name before "and" and a full name shares its surname.

    The first name's mention is renamed ("Russell Kraus") through ``names``, the map of mentions
    whose name is not their text.
    """
    ordered = sorted(kept)
    for (s1, e1, t1, b1), (s2, e2, t2, _b2) in zip(ordered, ordered[1:], strict=False):
        if (
            t1 == t2 == "PERSON"
            and not b1
            and e1 - s1 == 1
            and e2 - s2 >= 2
            and s2 == e1 + 1
            and doc[e1].lower_ == "and"
            and doc[s1].is_title
        ):
            names[(s1, e1)] = f"{doc[s1].text} {doc[e2 - 1].text}"
    return kept


_AMOUNT = re.compile(r"^[−+-]?\d[\d,]*(?:\.\d+)?(?:[–-]\d[\d,]*(?:\.\d+)?)?%?$")
_AMOUNT_JOINS = {"to", "-", "–", "—"}  # "18 to 20", "70 – 75 °F"
_SUBTREE_LIMIT = 12  # tokens of a value phrase searched for its number


def _unit(doc: Doc, i: int) -> bool:
    """A unit word of an amount; "C"/"F" only after a degree sign, "in" only closing a conversion ("(7.9 in)")."""
    tok = doc[i]
    low = tok.lower_
    if low in MEASURE_UNITS:
        return True
    if tok.text in {"C", "F", "K"}:
        return i > 0 and doc[i - 1].text == "°"
    return low == "in" and i + 1 < len(doc) and doc[i + 1].text == ")"


def _amount_run(doc: Doc, i: int, limit: int) -> tuple[int, bool]:
    """The end of the amount starting at number ``doc[i]`` (numbers, joins between numbers, units), and
    whether a unit was read."""
    end, has_unit, j = i + 1, False, i + 1
    while j < limit:
        tok = doc[j]
        if _AMOUNT.match(tok.text):
            end = j + 1
        elif _unit(doc, j):
            end, has_unit = j + 1, has_unit or tok.lower_ not in {"million", "billion", "thousand"}
        elif not (tok.lower_ in _AMOUNT_JOINS and j + 1 < limit and _AMOUNT.match(doc[j + 1].text)):
            break
        j += 1
    return end, has_unit


def measure_span(doc: Doc, tok: Token) -> tuple[int, int, int, bool] | None:
    """(start, end, end with a parenthesised conversion, has a unit) of the amount ``tok`` heads or
    belongs to, or None. Nothing is registered: a caller may test the words around it first."""
    sub = sorted(tok.subtree, key=lambda t: t.i)[:_SUBTREE_LIMIT]
    first = next((t for t in sub if _AMOUNT.match(t.text)), None)
    if first is None:
        return None
    limit = len(doc)
    end, has_unit = _amount_run(doc, first.i, limit)
    full = end  # a conversion the text kept in parentheses (an unbalanced aside): "2 ° C (35.6 ° F)"
    if end + 2 < limit and doc[end].text == "(" and _AMOUNT.match(doc[end + 1].text):
        conv_end, conv_unit = _amount_run(doc, end + 1, limit)
        if conv_unit and conv_end < limit and doc[conv_end].text == ")":
            full = conv_end + 1
    if not first.i <= tok.i < full:
        return None  # "the 2010 census": the number modifies a noun that is no amount
    start = first.i - 1 if first.i > 0 and doc[first.i - 1].text == "−" else first.i  # "− 3.9 ° C"
    return start, end, full, has_unit


def tidy_amount(text: str) -> str:
    """An amount as usually written: ``− 3.9 ° C`` -> ``−3.9 °C``."""
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"°\s+([CFK])\b", r"°\1", text)
    return re.sub(r"([−-])\s+(?=\d)", r"\1", text)

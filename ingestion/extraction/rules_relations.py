"""Facts from a dependency parse, each with its questions in both directions.

One generic pattern covers most sentence shapes: a predicate (a verb, a
copula, an apposition) with a subject entity and a *path* to an object entity
-- the object itself, a preposition and its object, or a describing noun and
its preposition ("is the capital of", "was born in", "moved to", "was
published by"). For every (subject, path, object) the rules write the question
whose answer is the object ("Where was X born?", "Who published X?") and the
one whose answer is the subject ("Who was born in Y?", "What was published by
Y?"), choosing the wh-word from the answer's type.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from spacy.tokens import Doc, Token

from engramdb.ingestion.extraction.rules_entities import EntityRecord, EntityTable, measure_span
from engramdb.ingestion.extraction.rules_lexicon import (
    ABSORBED_PREPS,
    APPROXIMATORS,
    CREDIT_NOUNS,
    DIMENSIONS,
    DIRECTIONS,
    MEASURE_NOUNS,
    MONTHS_AND_SEASONS,
    NAMING_PLACE_NOUNS,
    NOUN_TYPES,
    RELATIVE_PRONOUNS,
    country_of_demonym,
    participle_of_past,
    party_of_adjective,
    past_of_participle,
    place_kind,
    simple_past,
)

_SUBJ = {"nsubj", "nsubjpass"}
_OBJ = {"dobj", "attr", "oprd", "dative"}
_PREDICATES = {"ROOT", "conj", "relcl", "acl", "advcl", "ccomp", "xcomp", "pcomp"}
# Dependencies of a participle or gerund that says no tense of its own ("a film starring X", "before joining Y")
_NONFINITE_DEPS = {"acl", "advcl", "relcl", "conj", "pcomp"}
_LIST_VERBS = {"include", "comprise", "feature"}  # "Notable works include A and B"
# "cause X to rise by N" ("make" is left out: "made preparations to attack Y" is a purpose, not a cause)
_CAUSATIVES = {"cause", "force", "allow", "enable", "compel", "permit"}
_ALIAS_VERBS = {"know", "call", "name", "nickname", "title", "rename", "dub", "style"}
_MAX_PHRASE = 5
# Named sites no other place lies in: "played in London in Wembley Stadium" nests nothing
_SITES = frozenset(
    "airport bridge building castle cathedral church hall highway park road stadium station street".split()
)
_RANGE_PREPS = {"to", "until", "till", "through"}
# Nouns of a measure's extremes, measures too as a verb's subject: "average lows drop below -5 °C"
_EXTREMES = frozenset({"high", "low", "maximum", "minimum"})
# Prepositions before an amount a measure reaches: "dips to 5 °C", "ranges from 12 to 25 °C"
_AMOUNT_PREPS = {"to", "from", "below", "above", "over", "under", "around", "at", "of"}
# Words that make a name a body, not a person: a party word before one is part of its name
_BODY_WORDS = frozenset("party league front alliance union movement congress bloc coalition".split())
_MAX_SLOTS = 4  # participants of one event named in a question besides the subject
_ORDINAL_WORD = re.compile(r"^(?:\d+(?:st|nd|rd|th)|second|third|fourth|fifth)$", re.IGNORECASE)
_MAX_LISTED = 3  # entities of one slot of an event; a longer list gets two-entity questions only
# Prepositions that tell another thing of the noun's kind: "the film of the novel", "the film by X"
_OWN_PREPS = frozenset({"of", "by", "about", "from"})


@dataclass
class Question:
    text: str
    asked: list[str]  # entity keys named in the question
    answers: list[str]


@dataclass
class Fact:
    """A relation between entities (``vp``) with the questions it answers."""

    subject: str
    vp: str
    questions: list[Question] = field(default_factory=list)


@dataclass
class _Path:
    words: list[str]  # words between the predicate and the entity ("the capital of")
    key: str
    tok: Token
    agent: bool = False
    via_prep: bool = False  # the path starts at a preposition of the predicate
    noun: Token | None = None  # the describing noun on the path, if any
    count_noun: Token | None = None  # "1,200 stores": the counted noun
    kind: str | None = None  # "the island of Tahiti": the kind of place that introduced the name
    kind_of: bool = True  # the kind stands before the name with "of" ("the island of"); not "clubs such as"
    topic: bool = False  # the article's topic under a definite noun ("the film"), not a name


class RelationRules:
    """Runs the patterns over one parsed chunk whose entities are known."""

    def __init__(self, doc: Doc, table: EntityTable) -> None:
        self.doc = doc
        self.t = table
        self.facts: list[Fact] = []
        self.within: dict[str, list[str]] = {}  # a place -> the places a comma chain puts it in

    # ------------------------------------------------------------------ entry
    def run(self) -> list[Fact]:
        _retag_participles(self.doc)
        self._place_chains()
        for tok in self.doc:
            self._shared_place(tok)
        for inner, outer in self.t.divisions:  # "Ohio's 3rd congressional district" lies in Ohio
            self._located_fact(inner, outer)
        for tok in self.doc:
            self._successive_places(tok)
            if tok.dep_ in {"attr", "oprd"} and tok.lemma_.lower() in {"month", "season"}:
                self._superlative_month(tok)
            if tok.dep_ == "appos" or tok.dep_ == "npadvmod" and self._closes_subject(tok):
                self._apposition(tok)
            elif self._is_predicate(tok):
                self._predicate(tok)
            if self.t.key_at(tok) and tok.pos_ == "PROPN":
                self._located(tok)
                self._demonym_modifier(tok)
            elif tok.pos_ == "NOUN" and not self.t.key_at(tok):
                self._possessed(tok)
                self._measure_of(tok)
        return self.facts

    def _place_chains(self) -> None:
        """``Loudon, New Hampshire, United States``: each place of a comma chain lies in every later one.

        The first place also takes the chain's first two names ("Loudon, New Hampshire") as an
        alias, the fuller name a reader (or a model) gives it.
        """
        spans = sorted({(s, e, k) for s, e, k in self.t.mention_spans})
        chain: list[tuple[int, int, str]] = []

        for n, span in enumerate([*spans, None]):
            if span is not None and (
                self.t.get(span[2]).type == "PLACE"
                or chain
                and self._retyped_if_flanked(chain[-1], span, spans[n + 1 : n + 2])
            ):
                if chain and self._follows(chain[-1], span):
                    chain.append(span)
                    continue
            if len(chain) > 1 and not self._listed(chain[-1][1]) and not self._same_kinds(chain):
                self._chain_facts([k for _s, _e, k in chain])
            chain = [span] if span is not None and self._place_like(span, spans[n + 1 : n + 2]) else []

    def _follows(self, a: tuple[int, int, str], b: tuple[int, int, str]) -> bool:
        """Mention ``b`` comes right after mention ``a`` and a comma, and does not name a subject
        ("The capital of Norway, Oslo, is": Oslo is no place in Norway's chain)."""
        if b[0] != a[1] + 1 or self.doc[a[1]].text != ",":
            return False
        return self._closes_subject(self.doc[b[0] : b[1]].root) is None

    def _place_like(self, span: tuple[int, int, str], nxt: list[tuple[int, int, str]]) -> bool:
        """A place, or a name the NER mistyped that a country or state follows ("Copenhagen, Denmark")."""
        rec = self.t.get(span[2])
        if rec.type == "PLACE":
            return True
        root = self.doc[span[0] : span[1]].root
        if (
            (rec.type in {"ORG", "THING"} or rec.type in {"PERSON", "NORP"} and root.dep_ == "pobj")
            and nxt
            and self._follows(span, nxt[0])
            and span[2] != self.t.title_key
        ):
            if place_kind(self.t.get(nxt[0][2]).name) in {"country", "state"}:
                rec.type = "PLACE"
                return True
        return False

    def _retyped_if_flanked(
        self, prev: tuple[int, int, str], span: tuple[int, int, str], nxt: list[tuple[int, int, str]]
    ) -> bool:
        """``in Ratnagiri district, Konkan, Maharashtra state``: a name the NER mistyped between two places
        of a comma chain is a place too, so it is retyped PLACE here and True returned; a person or
        group is never listed so."""
        rec = self.t.get(span[2])
        if rec.type not in {"ORG", "THING", "NORP", "PERSON"} or span[2] == self.t.title_key or not nxt:
            return False
        if not (self._follows(prev, span) and self._follows(span, nxt[0])):
            return False
        if self.t.get(nxt[0][2]).type != "PLACE":
            return False
        rec.type = "PLACE"
        return True

    def _shared_place(self, noun: Token) -> None:
        """``in Guilford and Rockingham Counties, North Carolina``: a place set off after a plural place
        noun is where every place the noun lists lies, the first as much as the last (a comma chain,
        read mention by mention, reaches only the last one)."""
        if not _plural_place(noun):
            return
        outer = next(
            (k for c in noun.children if c.dep_ == "appos" and c.i > noun.i and (k := self._place_key(c))),
            None,
        )
        if outer is None:
            return
        named = _listed_before(noun)
        first = noun
        while first.dep_ == "conj" and first.head.i < first.i:
            first = first.head
        if first is not noun:
            named.extend(m for m in coordinated(first) if m.i < noun.i)
        wider = [outer, *self.within.get(outer, [])]
        for key in dict.fromkeys(k for m in named if (k := self._place_key(m)) and k not in wider):
            known = self.within.setdefault(key, [])
            for place in wider:
                if place not in known:
                    known.append(place)
                    self._located_fact(key, place)

    def _place_key(self, tok: Token) -> str | None:
        key = self.t.key_at(tok)
        return key if key and self.t.get(key).type == "PLACE" else None

    def _listed(self, end: int) -> bool:
        """``Crawford, Dent, Franklin and Washington``: the chain goes on with "and": a list, not a
        nesting, unless a verb follows ("born in Far West, Missouri, and was named ...")."""
        words = [t.lower_ for t in self.doc[end : end + 2]]
        if words[:1] in (["and"], ["or"]):
            after = end + 1
        elif words[:1] == [","] and words[1:] in (["and"], ["or"]):
            after = end + 2
        else:
            return False
        while after < len(self.doc) and self.doc[after].pos_ == "ADV":  # "and later was", "and finally to"
            after += 1
        return after >= len(self.doc) or self.doc[after].pos_ not in {"VERB", "AUX"}

    def _same_kinds(self, chain: list[tuple[int, int, str]]) -> bool:
        """``Maries County, Gasconade County, Iron County``: two neighbours of one kind (two counties)
        cannot lie one in the other; the chain is a list, however it ends."""
        kinds = [place_kind(self.t.get(k).name) for _s, _e, k in chain]
        return any(a is not None and a == b for a, b in zip(kinds, kinds[1:], strict=False))

    def _chain_facts(self, keys: list[str]) -> None:
        keys = [k for i, k in enumerate(keys) if k not in keys[:i]]
        if len(keys) < 2:
            return
        first = self.t.get(keys[0])
        first.add_alias(f"{first.name}, {self.t.get(keys[1]).name}")
        for i, inner in enumerate(keys[:-1]):
            self.within.setdefault(inner, [k for k in keys[i + 1 :] if k not in self.within.get(inner, [])])
            for outer in keys[i + 1 :]:
                self._located_fact(inner, outer)

    def _located_fact(self, inner: str, outer: str) -> None:
        self.facts.append(located_fact(self.t, inner, outer))

    def _phrase_places(self, prep: Token) -> list[str]:
        """The places an "in" phrase names: its objects ("in A and B"), or the "of" object of a
        place noun ("in the region of A"), each with the places its comma chain puts it in."""
        out: list[str] = []
        for pobj in (g for g in prep.children if g.dep_ == "pobj"):
            for member in coordinated(pobj):
                keys = [self.t.key_at(member)]
                if keys[0] is None and NOUN_TYPES.get(member.lemma_.lower()) == "PLACE":
                    obj = _pobj(_prep_child(member, "of"))
                    keys = [self.t.key_at(obj) if obj is not None else None]
                if keys[0] is None:  # "in Guilford and Rockingham Counties": the names the plural lists
                    keys = self._listed_names(member)
                for key in keys:
                    if key and self.t.get(key).type == "PLACE" and key not in out:
                        out.append(key)
                        out.extend(k for k in self.within.get(key, []) if k not in out)
        return out

    def _listed_names(self, noun: Token) -> list[str | None]:
        """``Guilford and Rockingham Counties`` / ``Crawford and Dent counties``: the names a plural place
        noun lists before it, as modifiers and their conjuncts."""
        return [self.t.key_at(m) for m in _listed_before(noun)] if _plural_place(noun) else []

    def _successive_places(self, head: Token) -> None:
        """``a town in Kent County, in northern Kansas`` / ``located in central Nevada in the United States``.

        Two "in" phrases of one word, each naming a place, go from the narrower place to the wider
        one: every place of an earlier phrase lies in every place of a later one. The wider place
        is a region or a country (not a building: "in London at Wembley" is no nesting).
        """
        preps = [c for c in head.children if c.dep_ == "prep" and c.lower_ == "in"]
        if len(preps) < 2:
            return
        phrases = [self._phrase_places(p) for p in preps]
        for i, inner_keys in enumerate(phrases):
            for outer_keys in phrases[i + 1 :]:
                for outer in outer_keys:
                    if not self._region(outer):
                        continue
                    for inner in inner_keys:
                        if inner != outer and outer not in self.within.get(inner, []):
                            self._located_fact(inner, outer)

    def _region(self, key: str) -> bool:
        """A place the NER calls a geopolitical entity or a location (not a building or facility)."""
        if self.t.get(key).name.split()[-1].lower() in _SITES:
            return False  # "Wembley Stadium": the NER's GPE is a building
        spans = [s for s, _e, k in self.t.mention_spans if k == key]
        return bool(spans) and all(self.doc[s].ent_type_ in {"GPE", "LOC"} for s in spans)

    def _possessed(self, noun: Token) -> None:
        """``his album No Fences`` / ``her husband, John Reed`` / ``Chicago's Bronzeville neighborhood``.

        A noun with an owner (a name or a pronoun) and a name of its own relates the two: "What is
        the album of X?" -> No Fences, "Whose album is No Fences?" -> X.
        """
        poss = next((c for c in noun.children if c.dep_ == "poss"), None)
        if poss is None:
            return
        owner = self._possessor(poss)
        named = [
            k
            for c in noun.children
            if (c.dep_ == "appos" and c.i > noun.i or c.dep_ == "compound" and c.i < noun.i)
            and c.i != poss.i
            and (k := self.t.key_at(c))
        ]
        if not owner or not named or named[0] == owner:
            return
        key = named[0]
        o, n = self.t.get(owner), self.t.get(key)
        if o.type == n.type == "PLACE":  # "Chicago's Bronzeville neighborhood": a place inside a place
            self._chain_facts([key, owner])
            return
        word = noun.lemma_.lower()
        wh = "Who" if n.type == "PERSON" else "What"
        qs = [
            Question(f"{wh} is the {word} of {o.name}?", [owner], [key]),
            Question(f"Whose {word} is {n.name}?", [key], [owner]),
        ]
        n.add_role(word)
        self.facts.append(Fact(owner, f"has the {word}", qs))

    def _measure_of(self, noun: Token) -> None:
        """``a low temperature of 9 °F was recorded in 1954`` / ``with an average rainfall of 40 inches``.

        A measure noun whose "of" object is an amount with a unit states a value of its owner (an
        "in" place, a possessive, else the topic) as surely as "The rainfall is 40 inches" does, and
        the dates and places of the clause it is the subject of ("recorded in 1954") name the value.
        A "have" object of a named subject is left to the verb's own fact ("X has a rainfall of N").
        """
        if noun.lemma_.lower() not in MEASURE_NOUNS:
            return
        holders = [
            noun,
            *(g for c in noun.children if c.dep_ == "prep" and c.lower_ == "in" for g in c.children),
        ]
        amount = _pobj(next((p for h in holders if (p := _prep_child(h, "of")) is not None), None))
        if amount is None or measure_span(self.doc, amount) is None:
            return
        head = noun.head
        if noun.dep_ == "dobj" and self.subject(head)[0] is not None:
            return
        of_target, link = self._value_owner(noun)
        key = self.t.measure_at(amount, unit_needed=True)
        if key is None or of_target is None or key == of_target:
            return
        words = noun_phrase(noun, self.t)
        if not words:
            return
        pred = head if noun.dep_ in _SUBJ else noun
        contexts = self._value_contexts(pred, amount, [key, of_target], noun)
        be = "was" if pred.tag_ in {"VBD", "VBN"} else self._tense_word(noun)
        self._attribute_fact(be, _uncapitalised(words, noun), (of_target, link), [key], contexts)

    def _value_owner(self, tok: Token) -> tuple[str | None, str]:
        """Whose measure ``tok`` is (:meth:`_owner`); an amount owns no measure, so then the topic."""
        of_target, link = self._owner(tok, measure=True)
        if of_target is None or self.t.get(of_target).type == "NUMBER":
            return self.t.title(), "of"
        return of_target, link

    def _superlative_month(self, noun: Token) -> None:
        """``May is the hottest month`` / ``The months of June and July are considered the driest months``.

        Months (or seasons) named a superlative month of the year are that of the place the noun's
        "in" names, else of the topic, as the reversed "The hottest month is May" already says: "What
        is the hottest month of X?" -> May, "What is May the hottest month of?" -> X. The months are
        read from the words, as the small NER often leaves a lone month unnamed.
        """
        superlative = next((c for c in noun.children if c.dep_ == "amod" and c.tag_ == "JJS"), None)
        pred = noun.head
        subj_tok = next((c for c in _subject_tokens(pred) if c.dep_ in _SUBJ), None)
        if superlative is None or subj_tok is None or pred.lemma_ not in {"be", "consider"}:
            return
        if subj_tok.lemma_.lower() in {"month", "season"}:  # "The months of June and July"
            subj_tok = _pobj(_prep_child(subj_tok, "of"))
        members = coordinated(subj_tok) if subj_tok is not None else []
        if not members or any(m.lower_ not in MONTHS_AND_SEASONS for m in members):
            return
        keys = [k for m in members if (k := self._month_key(m))]
        of_target, link = self._owner(noun, measure=True)
        if of_target is None or of_target in keys or self.t.get(of_target).type == "DATE":
            of_target, link = self.t.title(), "of"
        if of_target is None or of_target in keys or not keys:
            return
        words = ["the", superlative.lower_, noun.lower_]
        past = any(
            t.tag_ == "VBD" for t in [pred, *pred.children] if t.dep_ in {"aux", "auxpass"} or t == pred
        )
        be = ("were" if past else "are") if len(keys) > 1 else ("was" if past else "is")
        self._attribute_fact(be, words, (of_target, link), keys, [])

    def _month_key(self, tok: Token) -> str | None:
        """The month's own entity: the NER's span when it is just the month, else one read from the word
        (the NER joins "October and November" into one date)."""
        key = self.t.key_at(tok)
        if key is not None and self.t.get(key).name.lower() == tok.lower_:
            return key
        return self.t.add_entity(tok.text, "DATE", tok.i)

    def _located(self, tok: Token) -> None:
        """``the Atbarah River in northeast Africa``: a place phrase attached to a named entity."""
        key = self.t.key_at(tok)
        inner = self.t.key_at(tok.head) == key and tok.head.i != tok.i
        # the last word of a name ending in a phrase of its own ("the Centre for the Deaf in Toronto")
        # carries what the parser hangs on the whole name
        last = tok.i + 1 >= len(self.doc) or self.t.key_at(self.doc[tok.i + 1]) != key
        if inner and not last or self.t.get(key).type in {"DATE", "NUMBER", "PERSON"}:
            return  # a PERSON: "with Jonas Holm in Oslo" is the event's place
        for prep in tok.children:
            if prep.dep_ != "prep" or prep.lower_ not in {"in", "at", "near"}:
                continue
            for pobj in prep.children:
                place = self.t.key_at(pobj) if pobj.dep_ == "pobj" else None
                if not place or place == key:
                    continue
                rec = self.t.get(place)
                if rec.type == "THING" and self.t.get(key).type == "PLACE" and pobj.pos_ == "PROPN":
                    rec.type = "PLACE"  # "the village of Rude in southern Zealand": a name no NER typed
                if rec.type == "PLACE":
                    self.facts.append(located_fact(self.t, key, place, what="What"))

    @staticmethod
    def _is_predicate(tok: Token) -> bool:
        if tok.pos_ == "VERB":
            return tok.dep_ in _PREDICATES
        if tok.pos_ == "AUX" and tok.lemma_ == "be":
            return tok.dep_ in _PREDICATES
        return False

    # ------------------------------------------------------------ resolution
    def resolve(self, tok: Token, depth: int = 0) -> str | None:
        """The entity a subject/object token stands for, if any."""
        key = self.t.key_at(tok)
        if key:
            return None if _stands_for_people(tok, self.t.get(key).type) else key
        if tok.lower_ in RELATIVE_PRONOUNS and tok.pos_ in {"PRON", "DET"}:
            return self._antecedent(tok, depth)
        if tok.pos_ == "PRON":
            return self.t.resolve_pronoun(tok)
        if depth > 2:
            return None
        if tok.dep_ == "appos":
            return self.resolve(tok.head, depth + 1)
        if tok.pos_ in {"NOUN", "PROPN"}:
            for child in tok.children:  # "the journal X" / "the film Titanic"
                if child.dep_ in {"appos", "compound"} and self.t.key_at(child) and child.i > tok.i:
                    if child.pos_ == "NUM" and tok.tag_ == "NNS":  # "eleven children: eight at A, three at B"
                        continue  # counts of the plural, naming no one ("the period 833–34" is named)
                    return self.t.key_at(child)
            named = self._closing_name(tok)
            if named is not None:
                return self.t.key_at(named)
            definite = self.t.resolve_definite(tok)
            if definite:
                return definite
            if tok.dep_ == "attr" and tok.head.lemma_ == "be":  # "X is a journal [published by Y]"
                subj, _passive = self.subject(tok.head, depth + 1)
                return subj
        return None

    def _located_noun(self, participle: Token) -> Token | None:
        """``a house in Kirkwood, Missouri designed by Y``: the parser hangs a participle after a place
        phrase on the last place named, but a place that says where a thing is is not what the
        participle goes on to describe: the thing is. Returns the noun the place phrase hangs on
        (the house), or None when the participle's head is no such place."""
        if participle.tag_ != "VBN" or participle.lemma_ in _ALIAS_VERBS:
            return None
        tok = participle.head
        key = self.t.key_at(tok)
        # "in the village of Riverside built in 1874": hung on the kind noun, no chain to walk back
        on_kind = key is None and self._named_by_kind(tok) is not None
        if not on_kind and (key is None or self.t.get(key).type != "PLACE"):
            return None
        # "Kirkwood, Missouri": back along the chain of places to the first one
        for _hop in range(0 if on_kind else 3):
            before = (
                self.t.key_at(self.doc[tok.i - 2]) if tok.i >= 2 and self.doc[tok.i - 1].text == "," else None
            )
            if before is None or self.t.get(before).type != "PLACE":
                break
            tok = self.doc[tok.i - 2]
            while tok.head is not tok and self.t.key_at(tok.head) == before:
                tok = tok.head  # the mention's own head word
        prep = tok.head
        if tok.dep_ == "pobj" and prep.lower_ == "of" and self._named_by_kind(prep.head):
            tok, prep = prep.head, prep.head.head  # "in the town of Kirkwood": the town's phrase
        if tok.dep_ != "pobj" or prep.lower_ not in ABSORBED_PREPS or prep.head.pos_ != "NOUN":
            return None
        return None if self.t.key_at(prep.head) else prep.head

    def _possessor(self, poss: Token) -> str | None:
        """The entity a possessive names: "X's", or what "his"/"its"/"whose" stands for."""
        return self.t.key_at(poss) or (
            self.resolve(poss) if poss.pos_ == "PRON" or poss.tag_ == "WP$" else None
        )

    def _antecedent(self, pronoun: Token, depth: int) -> str | None:
        """What a relative pronoun stands for: the noun its clause hangs on, whatever its role in the
        clause ("X, whose father was Y", "the album, which she recorded in 1990", "the town in which")."""
        node = pronoun
        for _hop in range(3):
            if node.head is node:
                return None
            node = node.head
            if node.dep_ == "relcl":
                return None if depth > 2 else self.resolve(node.head, depth + 1)
        return None

    def subject(self, verb: Token, depth: int = 0) -> tuple[str | None, bool]:
        """(subject entity key, passive?) of a predicate."""
        passive = any(c.dep_ == "auxpass" for c in verb.children)
        for child in _subject_tokens(verb):
            if child.dep_ in _SUBJ:
                if child.lower_ in RELATIVE_PRONOUNS and verb.dep_ == "relcl":
                    return self.resolve(verb.head, depth + 1), passive
                return self.resolve(child, depth + 1), passive
        if depth > 3:
            return None, passive
        if verb.dep_ == "conj" and verb.head.pos_ in {"VERB", "AUX"}:
            subj, head_passive = self.subject(verb.head, depth + 1)
            # "a film starring X and directed by Y": a participle with an agent is passive itself
            return subj, passive or ((head_passive or _has_agent(verb)) and verb.tag_ == "VBN")
        if verb.dep_ in {"acl", "relcl"} and (verb.tag_ in {"VBN", "VBG"} or _participle_as_past(verb)):
            governor = _participle_governor(verb.head)
            if governor is not None and self.t.key_at(verb.head) and verb.lemma_ not in _ALIAS_VERBS:
                # "directed by X, written by Y": the second participle modifies what the first does
                subj, _p = self.subject(governor, depth + 1)
                return subj, verb.tag_ == "VBN"
            located = self._located_noun(verb)
            return self.resolve(located or verb.head, depth + 1), verb.tag_ == "VBN"
        if verb.dep_ == "advcl" and verb.tag_ in {"VBN", "VBG"} and verb.head.pos_ in {"VERB", "AUX"}:
            subj, _p = self.subject(verb.head, depth + 1)
            return subj, verb.tag_ == "VBN"
        if verb.dep_ == "xcomp" and verb.head.pos_ in {"VERB", "AUX"}:
            subj, _p = self.subject(verb.head, depth + 1)
            return subj, passive
        governor = _gerund_governor(verb)
        if governor is not None:
            subj, _p = self.subject(governor, depth + 1)
            return subj, passive
        return None, passive

    # ----------------------------------------------------------------- paths
    def paths(self, pred: Token) -> list[_Path]:
        found: list[_Path] = []
        for child in pred.children:
            if child.dep_ in _OBJ:
                found.extend(self._from_noun(child, []))
            elif child.dep_ == "advmod" and child.lower_ in DIRECTIONS:
                found.extend(self._direction_paths(child, [], 0))
            elif child.dep_ == "npadvmod" and (date := self._date_at(child)):
                # "was established February 6, 1902": a date with no preposition before it
                found.append(_Path([], date, child))
            elif child.dep_ in {"prep", "agent"} or _conjoined_prep(child):
                # "from 1951 to 1957": the second preposition hangs on the first
                preps = [child, *(g for g in child.children if g.dep_ == "prep" and g.lower_ in _RANGE_PREPS)]
                for prep in preps:
                    for pobj in prep.children:
                        if pobj.dep_ == "pobj":
                            found.extend(self._prep_paths(prep, pobj, agent=prep.dep_ == "agent"))
                            if (by := _misplaced_agent(pred, pobj)) is not None:
                                for agent in by.children:
                                    if agent.dep_ == "pobj":
                                        found.extend(self._prep_paths(by, agent, agent=True))
        seen: set[str] = set()
        unique = []
        for p in found:  # one path per entity: the first (closest) one
            if p.key not in seen:
                seen.add(p.key)
                unique.append(p)
        return unique

    def _prep_paths(self, prep: Token, pobj: Token, agent: bool) -> list[_Path]:
        """The paths through one object of a verb's preposition (``agent``: a "by" naming the doer)."""
        paths = self._from_noun(pobj, [prep.lower_])
        for p in paths:
            p.agent = agent
            p.via_prep = True
        return paths

    def _date_at(self, tok: Token) -> str | None:
        key = self.t.key_at(tok)
        return key if key and self.t.get(key).type == "DATE" else None

    def _from_noun(self, tok: Token, prefix: list[str], depth: int = 0) -> list[_Path]:
        out: list[_Path] = []
        for member in coordinated(tok):
            key = self.t.key_at(member) or (self.resolve(member) if member.pos_ == "PRON" else None)
            topic = None if key else self._topic_noun(member)
            if topic:  # "starred in the film alongside Y": the film is the topic; its phrases still count
                out.append(_Path(list(prefix), topic, member, topic=True))
            if key and _stands_for_people(member, self.t.get(key).type):
                continue
            if key:
                out.append(_Path(list(prefix), key, member))
                for extra in self._co_places(member, key):  # "Nashville, Tennessee"
                    out.append(_Path(list(prefix), extra, member))
                continue
            if not nominal(member) or depth >= 2:
                continue
            # "played for clubs such as Arsenal and Chelsea"; deeper in a phrase ("a number of rivers
            # such as", "languages with smaller numbers such as") the parser hangs "such as" on the
            # nearest plural, often the wrong one
            examples = self._examples(member) if depth == 0 else []
            if examples:  # the noun's other phrases still count ("more than sixty films such as A")
                kind = member.lower_ if len(examples) > 1 else _singular(member.lower_)
                out.extend(_Path(list(prefix), key, tok, kind=kind, kind_of=False) for key, tok in examples)
            if named_by_kind := self._named_by_kind(member):
                kind, places = named_by_kind
                self._take_kind(kind, places)
                for key, tok in places:
                    out.append(_Path(list(prefix), key, tok, kind=kind))
                    # "the region of Auvergne, France": the places written with its name
                    out.extend(
                        _Path(list(prefix), extra, tok) for extra in self._co_places(tok, key, anywhere=False)
                    )
                continue
            named = next(
                (
                    self.t.key_at(c)
                    for c in member.children
                    if c.dep_ == "appos" and c.i > member.i and self.t.key_at(c)
                ),
                None,
            )
            if named:  # "the American rock band Pearl Jam"
                out.append(_Path(list(prefix), named, member))
            for m in _listed_before(member):  # "through Crawford and Dent counties": each listed name
                if (k := self.t.key_at(m)) and all(p.key != k for p in out):
                    out.append(_Path(list(prefix), k, m))
            words = [self.t.get(topic).name] if topic else noun_phrase(member, self.t)
            if words is None:
                continue
            trailing = _trailing_adjectives(member)
            words = [*words, *(t.text for t in trailing)]
            for child in [*member.children, *(c for t in trailing for c in t.children)]:
                if (
                    child.dep_ == "nummod"
                    and self.t.key_at(child)
                    and self.t.get(self.t.key_at(child)).type == "NUMBER"
                ):
                    out.append(_Path(list(prefix), self.t.key_at(child), child, count_noun=member))
                elif child.dep_ == "prep" and not (examples and child.lower_ == "as"):
                    for pobj in child.children:
                        if pobj.dep_ == "pobj":
                            if child.lower_ == "of" and member.lemma_.lower() in MEASURE_NOUNS:
                                self.t.measure_at(pobj)  # "a population of 13,021": the amount is the value
                            for p in self._from_noun(pobj, [*prefix, *words, child.lower_], depth + 1):
                                p.noun = p.noun or member
                                out.append(p)
                elif child.dep_ == "poss" and (
                    owner := self.t.key_at(child) or self.t.resolve_definite(child)
                ):
                    out.append(_Path([*prefix, *_definite(words), "of"], owner, child, noun=member))
                elif child.dep_ == "advmod" and child.lower_ in DIRECTIONS:  # "a village south of X"
                    for p in self._direction_paths(child, [*prefix, *words], depth + 1):
                        p.noun = p.noun or member
                        out.append(p)
                elif child.dep_ == "appos" and child.lower_ == "one":
                    for place in _one_of_places(child):  # "a district, one of the seventeen in X"
                        for p in self._from_noun(place, [*prefix, *words, "in"], depth + 1):
                            p.noun = p.noun or member
                            out.append(p)
        return out

    def _topic_noun(self, noun: Token) -> str | None:
        """``Y directed the film`` in the film's own article: a bare definite noun the topic fits. Not
        what a copula says the subject is ("X was the source for Y" in X's article)."""
        if (
            noun.dep_ in {"attr", "oprd"}
            or any(c.dep_ != "det" for c in noun.children if c.i < noun.i)
            or any(
                c.dep_ in {"appos", "compound", "acl", "relcl"}
                or (c.dep_ == "prep" and c.lower_ in _OWN_PREPS)
                for c in noun.children
            )
        ):
            return None
        return self.t.resolve_definite(noun)

    def _named_by_kind(self, noun: Token) -> tuple[str, list[tuple[str, Token]]] | None:
        """``the city of Wichita`` / ``the U.S. state of Kansas`` / ``the cities of Midland and Odessa``:
        a kind of place whose "of" phrase gives its name says no more than the name does, so the
        name is the object ("X encompasses Wichita") and the kind what a question asks for ("What
        city does X encompass?"), not a noun on the way ("What does X encompass the city of?").
        Only a definite kind noun with nothing but modifiers and the one "of" phrase."""
        kind = _singular(noun.lower_) if noun.tag_ == "NNS" else noun.lower_
        if noun.pos_ != "NOUN" or kind not in NAMING_PLACE_NOUNS or self.t.key_at(noun):
            return None
        if not any(c.dep_ == "det" and c.lower_ == "the" for c in noun.children):
            return None
        # a participle or clause after the name is the thing's, not the kind's (see _located_noun)
        later = [
            c for c in noun.children if c.i > noun.i and c.dep_ not in {"punct", "cc", "conj", "acl", "relcl"}
        ]
        if len(later) != 1 or later[0].dep_ != "prep" or later[0].lower_ != "of":
            return None
        if any(c.dep_ not in {"det", "amod", "compound", "punct"} for c in noun.children if c.i < noun.i):
            return None
        pobj = _pobj(later[0])
        if pobj is None:
            return None
        places: list[tuple[str, Token]] = []
        # a singular kind names one place ("the city of Nashua, New Hampshire": the rest is where it
        # lies); a plural kind names its list, up to the places its last member lies in ("the
        # municipalities of A and B, Quebec, Canada")
        members = coordinated(pobj) if noun.tag_ == "NNS" else [pobj]
        for member in members:
            key = self.t.key_at(member)
            if places and key is not None and key in self.within.get(places[-1][0], []):
                break
            if key is not None and self.t.get(key).type in {"PERSON", "DATE", "NUMBER", "NORP"}:
                return None  # "the state of Washington" read as a person: no safe place
            if key is not None:
                places.append((key, member))
        return (kind, places) if places else None

    def _examples(self, noun: Token) -> list[tuple[str, Token]]:
        """``played for clubs such as Arsenal and Chelsea``: the named examples a plural noun is
        given through "such as" are what the verb reaches ("What club did X play for?" -> Arsenal),
        the noun their kind; 3.8 asked "What did X play for clubs as?"."""
        if noun.pos_ != "NOUN" or noun.tag_ != "NNS" or self.t.key_at(noun):
            return []
        prep = next(
            (
                c
                for c in noun.children
                if c.dep_ == "prep" and c.lower_ == "as" and any(g.lower_ == "such" for g in c.children)
            ),
            None,
        )
        pobj = _pobj(prep)
        if pobj is None:
            return []
        return [(key, m) for m in coordinated(pobj) if (key := self.t.key_at(m))]

    def _take_kind(self, kind: str, places: list[tuple[str, Token]]) -> None:
        """Places named through a kind noun are places of that kind, whatever the NER said."""
        for key, _tok in places:
            rec = self.t.get(key)
            rec.type = "PLACE"
            rec.add_role(kind, [])

    def _direction_paths(self, adverb: Token, prefix: list[str], depth: int) -> list[_Path]:
        """``lies north of Y`` / ``a village 5 km south of Y``: the place a direction is taken from.

        The parser makes the direction an adverb with its own "of" phrase, which the preposition
        paths never reach."""
        out: list[_Path] = []
        for prep in (c for c in adverb.children if c.dep_ == "prep" and c.lower_ == "of"):
            for pobj in (g for g in prep.children if g.dep_ == "pobj"):
                for p in self._from_noun(pobj, [*prefix, adverb.lower_, "of"], depth):
                    p.via_prep = True
                    out.append(p)
        return out

    def _co_places(self, tok: Token, key: str, anywhere: bool = True) -> list[str]:
        """The places ``tok``'s place lies in: those written with it ("Nashville, Tennessee", "in A in
        B") and those a comma chain put it in, anywhere in the passage or (not ``anywhere``) in
        ``tok``'s own sentence."""
        if self.t.get(key).type != "PLACE":
            return []
        sent = tok.sent
        chained = [
            k
            for k in self.within.get(key, [])
            if k != key
            and (anywhere or any(sent.start <= s < sent.end for s, _e, m in self.t.mention_spans if m == k))
        ]
        nested = [  # "in central New Hampshire in the United States"
            k
            for c in tok.children
            if c.dep_ == "prep" and c.lower_ in {"in", "of"}
            for g in c.children
            if g.dep_ == "pobj" and (k := self.t.key_at(g)) and k != key and self.t.get(k).type == "PLACE"
        ]
        return (
            chained
            + nested
            + [
                k
                for c in tok.children
                if c.dep_ in {"appos", "npadvmod"}
                and (k := self.t.key_at(c))
                and k != key
                and self.t.get(k).type == "PLACE"
            ]
        )

    # ------------------------------------------------------------- predicates
    def _predicate(self, pred: Token) -> None:
        subj, passive = self.subject(pred)
        if subj is None:
            subj = self._noun_subject_reversal(pred)
            if subj is None and self._owned_subject(pred, passive):
                return
            if subj is None and (self._credited_part(pred) or self._caused_event(pred)):
                return
            if subj is None:
                self._topic_subject(pred, passive)
                self._inclusion_list(pred)
                self._described_subject(pred, passive)
                self._measure_verb(pred, passive)
                return
        if _bare_infinitive(pred):
            return  # "want him to select Y", "moved to Paris to study art": no finite verb asserts it
        for key in [subj, *self._co_subjects(pred, subj)]:
            self._predicate_for(pred, key, passive)

    def _owned_subject(self, pred: Token, passive: bool) -> bool:
        """``X, whose father founded Y`` / ``X's works hang in Y`` / ``The music of the film was
        composed by Y``: a subject noun without a name but with a named owner (not a personal
        pronoun, whose antecedent is too often a guess; "the film" in the film's own article is
        the film) ties the owner to the objects: "Where do the works of X hang?" -> Y, "Whose works
        hang in Y?" -> X. True if a fact was made."""
        subj_tok = _shared_subject(pred)
        if subj_tok is None or subj_tok.pos_ != "NOUN" or pred.lemma_ == "be":
            return False
        poss = next((c for c in subj_tok.children if c.dep_ == "poss"), None)
        if poss is not None:
            owner = (
                self.t.key_at(poss)
                or (self.resolve(poss) if poss.tag_ == "WP$" else None)
                or self.t.resolve_definite(poss)
            )
            return self._owner_facts(pred, passive, subj_tok, owner)
        return self._of_owned_subject(pred, passive, subj_tok)

    def _caused_event(self, pred: Token) -> bool:
        """``A, which would cause sea levels to rise by 58 meters``: an event whose subject has no name,
        made to happen by a named causer, ties the causer to the event's other participants ("What
        would A cause sea levels to rise by?" -> 58 meters, "What would cause sea levels to rise by 58
        meters?" -> A). True if a fact was made."""
        cause = pred.head
        if pred.dep_ not in {"ccomp", "xcomp"} or cause.lemma_ not in _CAUSATIVES or cause.i > pred.i:
            return False
        subj_tok = next((c for c in pred.children if c.dep_ in _SUBJ), None)
        to = any(c.dep_ == "aux" and c.lower_ == "to" for c in pred.children)
        if subj_tok is None or subj_tok.pos_ != "NOUN" or not to or subj_tok.i < cause.i:
            return False
        causer, _passive = self.subject(cause)  # resolved only for a clause of the right shape
        if causer is None:
            return False
        words = noun_phrase(subj_tok, self.t)
        if not words or len(words) > 3:
            return False
        event = _join(
            [
                *_uncapitalised(words, subj_tok),
                "to",
                pred.lemma_,
                *(c.lower_ for c in pred.children if c.dep_ == "prt"),
            ]
        )
        vg = VerbGroup(cause, False, self.doc)
        name = self.t.get(causer).name
        made = False
        for path in self.paths(pred):
            if path.key == causer or path.count_noun is not None or path.noun is not None:
                continue
            o = self.t.get(path.key)
            wh, absorbed = _wh_object(o.type, list(path.words), False)
            tail = path.words[:-1] if absorbed else path.words
            questions = [
                Question(f"{wh} {vg.inverted(name, [event, *tail])}?", [causer], [path.key]),
                Question(f"What {vg.surface} {_join([event, *path.words, o.name])}?", [path.key], [causer]),
            ]
            self.facts.append(Fact(causer, _join([vg.surface, event, *path.words]), questions))
            made = True
        return made

    def _credited_part(self, pred: Token) -> bool:
        """``It stars A and B, and music composed by Y`` / ``with sets designed by Y``: a part of a work
        credited to someone by a participle, with no owner written, is the article's work's ("Who
        composed the music of X?" -> Y). True if a fact was made."""
        noun = pred.head
        before = self.doc[pred.i - 1] if pred.i > 0 else noun
        if noun.lower_ not in CREDIT_NOUNS and before.dep_ == "conj" and before.head == noun:
            noun = before  # "in the lead roles and music composed by Y": the parser hangs it on "roles"
        if pred.dep_ != "acl" or pred.tag_ != "VBN" or noun.pos_ != "NOUN" or noun.lower_ not in CREDIT_NOUNS:
            return False
        if not _has_agent(pred) or self.t.key_at(noun):
            return False
        if any(c.dep_ in {"poss", "prep"} or (c.dep_ == "det" and c.lower_ != "the") for c in noun.children):
            return False  # "his music composed by ...", "the music of Y": another owner, other rules
        owner = self.t.title()
        if owner is None or self.t.get(owner).type in {"PERSON", "PLACE", "DATE", "NUMBER"}:
            return False
        return self._owner_facts(pred, True, noun, owner, counts=False)

    def _of_owned_subject(self, pred: Token, passive: bool, subj_tok: Token) -> bool:
        """``The music of the film was composed by Y`` / ``The politics of the state have been
        dominated by Y``: a definite subject noun whose "of" object is a name, or the topic under
        a definite description, is that owner's ("Who composed the music of X?" -> Y). Measures,
        counts and lists keep their own rules ("The population of X", "The works of X include")."""
        dets = [c.lower_ for c in subj_tok.children if c.dep_ == "det"]
        lemma = subj_tok.lemma_.lower()
        if (
            dets != ["the"]
            or lemma in MEASURE_NOUNS | _EXTREMES | {"number"}
            or pred.lemma_ in {"have", *_LIST_VERBS}
        ):
            return False
        of = [c for c in subj_tok.children if c.dep_ == "prep" and c.lower_ == "of"]
        objects = [g for c in of for g in c.children if g.dep_ == "pobj"]
        if (
            len(objects) != 1
            or objects[0].dep_ == "conj"
            or any(g.dep_ == "conj" for g in objects[0].children)
        ):
            return False
        owner = self.t.key_at(objects[0]) or self.t.resolve_definite(objects[0])
        return self._owner_facts(pred, passive, subj_tok, owner, counts=False)

    def _owner_facts(
        self, pred: Token, passive: bool, subj_tok: Token, owner: str | None, counts: bool = True
    ) -> bool:
        """The facts of a subject noun owned by ``owner``: for each object, "Where do the works of X
        hang?" and "Whose works hang in Y?". True if a fact was made. Without ``counts``, a bare
        number is no object ("included two in Wapello": two of what, the noun says, not the number)."""
        words = noun_phrase(subj_tok, self.t)
        if not owner or not words or len(words) > 3:
            return False
        role = _join([w for w in _uncapitalised(words, subj_tok) if w.lower() not in {"the", "a", "an"}])
        name = self.t.get(owner).name
        vg = VerbGroup(pred, passive, self.doc)
        surface = vg.surface
        if vg.synthetic and subj_tok.tag_ == "NNS":  # "sets designed by Y": "Whose sets were designed ...?"
            surface = _join([{"was": "were", "is": "are"}.get(vg.aux[0], vg.aux[0]), vg.verb, *vg.particles])
        made = False
        for path in self.paths(pred):
            if path.key == owner or path.count_noun is not None or path.noun is not None:
                continue
            o = self.t.get(path.key)
            if not counts and o.type == "NUMBER":
                continue
            wh, absorbed = _wh_object(o.type, list(path.words), False)
            tail = path.words[:-1] if absorbed else path.words
            owned = f"the {role} of {name}"
            if path.agent and vg.active_past():  # "Who composed the music of X?", as for a named subject
                asked = f"{_wh_agent(o.type)} {vg.active_past()} {owned}?"
            else:
                asked = f"{wh} {vg.inverted(owned, tail)}?"
            questions = [
                Question(asked, [owner], [path.key]),
                Question(f"Whose {role} {surface} {_join([*path.words, o.name])}?", [path.key], [owner]),
            ]
            self.facts.append(Fact(owner, _join([f"has {role} that", vg.surface, *path.words]), questions))
            made = True
        return made

    def _topic_subject(self, pred: Token, passive: bool) -> None:
        """``The dry season runs from December to June`` / ``The owners lived there for 40 years``.

        A definite subject noun without a name, owner or "of" phrase, in a passage about one topic,
        is the topic's own ("the dry season" of Guam), as a reader takes it and as :meth:`_owner`
        already takes a measure's: "Whose dry season runs from December?" -> the topic. Measure
        nouns are left to the measure rules, which read their amounts.
        """
        subj_tok = _shared_subject(pred)
        if subj_tok is None or subj_tok.pos_ != "NOUN" or pred.lemma_ in {"be", *_LIST_VERBS}:
            return  # "The works include A and B" is the inclusion list's
        if subj_tok.lemma_.lower() in MEASURE_NOUNS | _EXTREMES or self.t.key_at(subj_tok):
            return
        dets = [c.lower_ for c in subj_tok.children if c.dep_ in {"det", "poss"}]
        if dets != ["the"] or any(c.dep_ == "prep" or self.t.key_at(c) for c in subj_tok.children):
            return  # "the United States government", "the number of districts": an owner of its own
        owner = self.t.title()
        if owner is None or self.t.get(owner).type in {"DATE", "NUMBER"}:
            return
        if self.t.get(owner).name.split()[-1].lower() == subj_tok.lower_:
            self._predicate_for(pred, owner, passive)  # "The centre is managed by X" in "... Centre"
        else:
            self._owner_facts(pred, passive, subj_tok, owner, counts=False)

    def _co_subjects(self, pred: Token, subj: str) -> list[str]:
        """``A and B founded C``: the other named subjects, each doing what the first does."""
        tok = _shared_subject(pred)
        if tok is None:
            return []
        if tok.lower_ in RELATIVE_PRONOUNS and pred.dep_ == "relcl":
            tok = pred.head  # "A and B, which border C": the clause's antecedent is the whole list
        out: list[str] = []
        for conj in coordinated(tok)[1:]:
            key = self.t.key_at(conj)
            if key and key != subj and key not in out and self.t.key_at(tok) != key:
                out.append(key)
        return out

    def _predicate_for(self, pred: Token, subj: str, passive: bool) -> None:
        copula = pred.lemma_ == "be"
        if copula:
            self._describe(subj, pred)
            self._dimension(subj, pred)
        vg = VerbGroup(pred, passive, self.doc)
        context = self._context_object(pred, subj)
        alias_verb = pred.lemma_ in _ALIAS_VERBS and (passive or pred.tag_ == "VBN")
        kept: list[_Path] = []
        for path in self.paths(pred):
            if path.key == subj:
                continue
            ctx = context if context and context[1] != path.key and path.via_prep else None
            if path.count_noun is not None:
                self._count_fact(subj, vg, path)
                continue
            if alias_verb and not path.words[:-1] and path.words[-1:] in ([], ["as"]):
                # "X, also known as Y": Y is another name of X, an alias and not a fact; a QA pair
                # "What is X known as? Y" would answer X with itself once Y joins X's node.
                self.t.get(subj).add_alias(self.t.get(path.key).name)
                continue
            self._fact(subj, vg, path, ctx)
            kept.append(path)
        self._nary(subj, vg, kept)
        self._co_members(subj, vg, kept)

    def _co_members(self, subj: str, vg: VerbGroup, paths: list[_Path]) -> None:
        """``flows along the border between A, B and C`` / ``covers six counties -- A, B and C``.

        The members of a list that is one whole -- the objects of "between", or an enumeration set
        off after a plural noun -- stand in a relation to each other, not only to the subject: each
        answers a question naming the others ("X flows along the border between A, B and which other
        place?"). An ordinary list ("covers A, B and C") is left alone: its members need not relate.
        """
        slots: dict[tuple[str, ...], list[_Path]] = {}
        for path in paths:
            if _joint_list(path.tok):
                slots.setdefault((*path.words, "|agent" if path.agent else ""), []).append(path)
        name = self.t.get(subj).name
        for members in slots.values():
            keys = list(dict.fromkeys(p.key for p in members))
            if len(keys) < 2:
                continue
            words = members[0].words
            noun = Counter(_kind_noun(self.t.get(k)) for k in keys).most_common(1)[0][0]
            for key in keys:
                listed = ", ".join(self.t.get(k).name for k in keys if k != key)
                text = f"{_join([name, vg.surface, *words, listed])} and which other {noun}?"
                self.facts.append(
                    Fact(
                        subj,
                        _join([vg.surface, *words]),
                        [Question(text, [subj, *(k for k in keys if k != key)], [key])],
                    )
                )

    def _dimension(self, subj: str, pred: Token) -> None:
        """``The river is 218 miles long`` / ``300 metres (980 ft) tall`` / ``218 miles in length``.

        An amount with a unit right after the copula, then a size adjective or "in" and a measure
        noun, is the subject's length (height, width, depth): "How long is X?", "What is the length
        of X?" and "What is 218 miles long?". The amount is read from the text, as the parser makes
        the adjective anything from a complement to a noun's apposition.
        """
        doc = self.doc
        i = pred.i + 1
        while i < len(doc) and (doc[i].lower_ in APPROXIMATORS or doc[i].dep_ == "neg"):
            i += 1
        if i >= len(doc) or doc[i].sent != pred.sent:
            return
        span = measure_span(doc, doc[i])
        if span is None or span[0] != i or not span[3] or span[2] >= len(doc):
            return
        after = doc[span[2]]
        adjective = after.lower_ if after.lower_ in DIMENSIONS else None
        noun = DIMENSIONS.get(after.lower_)
        if adjective is None:
            nxt = doc[span[2] + 1] if span[2] + 1 < len(doc) else None
            if after.lower_ != "in" or nxt is None or nxt.lemma_.lower() not in MEASURE_NOUNS:
                return
            noun = nxt.lemma_.lower()
        key = self.t.measure_at(doc[i], unit_needed=True)
        if key is None or key == subj:
            return
        name, amount = self.t.get(subj).name, self.t.get(key).name
        be = pred.text if pred.pos_ == "AUX" and not any(c.dep_ == "aux" for c in pred.children) else "is"
        qs = [
            Question(f"What {be} the {noun} of {name}?", [subj], [key]),
            Question(f"What {be} {amount} the {noun} of?", [key], [subj]),
        ]
        if adjective:
            qs.append(Question(f"How {adjective} {be} {name}?", [subj], [key]))
            qs.append(Question(f"What {be} {amount} {adjective}?", [key], [subj]))
        self.facts.append(Fact(subj, f"{be} {noun}", qs))

    def _measure_verb(self, pred: Token, passive: bool) -> None:
        """``Maximum temperatures often exceed 41 °C in May`` / ``Rainfall averages 800 mm``.

        A measure noun as the subject of a verb whose object (or "to"/"below"/... object, or "a
        maximum of" object) is an amount with a unit: the owner's measure does that to the amount
        ("What do the maximum temperatures of X exceed?", "Whose maximum temperatures exceed 41 °C?")
        and the clause's dates and places name the amount and each other.
        """
        subj_tok = _shared_subject(pred)
        if passive or pred.lemma_ == "be" or subj_tok is None or subj_tok.pos_ != "NOUN":
            return
        if subj_tok.lemma_.lower() not in MEASURE_NOUNS | _EXTREMES:
            return
        amount, words = self._verb_amount(pred)
        if amount is None:
            return
        of_target, link = self._value_owner(subj_tok)
        key = self.t.measure_at(amount, unit_needed=True)
        phrase = noun_phrase(subj_tok, self.t)
        if key is None or of_target is None or key == of_target or not phrase:
            return
        role = _join(
            ["the", *(w for w in _uncapitalised(phrase, subj_tok) if w.lower() not in {"the", "a", "an"})]
        )
        owner, value = self.t.get(of_target).name, self.t.get(key).name
        vg = VerbGroup(pred, False, self.doc)
        where = f"{role} {link} {owner}"
        questions = [
            Question(f"What {vg.inverted(where, words)}?", [of_target], [key]),
            Question(f"Whose {role[4:]} {_join([vg.surface, *words, value])}?", [key], [of_target]),
        ]
        for prep, ctx in self._value_contexts(pred, amount, [key, of_target]):
            c = self.t.get(ctx[0])
            ask = _wh_context(c.type)
            names = " and ".join(self.t.get(k).name for k in ctx)
            questions.append(
                Question(f"What {vg.inverted(where, [*words, prep, names])}?", [of_target, *ctx], [key])
            )
            questions.append(Question(f"{ask} {vg.inverted(where, [*words, value])}?", [of_target, key], ctx))
        self.facts.append(Fact(of_target, _join(["has", role[4:], "that", vg.surface, *words]), questions))

    def _verb_amount(self, pred: Token) -> tuple[Token | None, list[str]]:
        """The amount a verb takes (its object, a preposition's object, "a maximum of" N) and the words
        before it ("to", "a maximum of"); (None, []) if there is none with a unit."""
        for child in pred.children:
            if child.i < pred.i:
                continue
            if child.dep_ == "dobj":
                if measure_span(self.doc, child) is not None:
                    return child, []
                pobj = _pobj(_prep_child(child, "of"))
                if pobj is not None and measure_span(self.doc, pobj) is not None:
                    return pobj, ["a", child.lower_, "of"]
            elif child.dep_ == "prep" and child.lower_ in _AMOUNT_PREPS:
                pobj = _pobj(child)
                if pobj is not None and measure_span(self.doc, pobj) is not None:
                    return pobj, [child.lower_]
        return None, []

    def _described_subject(self, pred: Token, passive: bool) -> None:
        """``The speculation was put forward by A in 1596``: a subject with no name still ties A to 1596."""
        subj_tok = _shared_subject(pred)
        if subj_tok is None or subj_tok.pos_ != "NOUN" or pred.lemma_ == "be":
            return
        words = noun_phrase(subj_tok, self.t)
        if not words or len(words) > 4:
            return
        paths = [p for p in self.paths(pred) if p.count_noun is None]
        self._nary(None, VerbGroup(pred, passive, self.doc), paths, " ".join(_definite(words)))

    def _nary(self, subj: str | None, vg: VerbGroup, paths: list[_Path], described: str = "") -> None:
        """One event, all its participants: a question per participant naming every other one.

        "In 1974 X completed a tour of Africa with Y" links X, Africa, Y and 1974 to each other,
        as a model's workspace does ("When did X complete a tour of Africa with Y?"); the
        two-entity questions of :meth:`_fact` stay for plain look-ups. Paths sharing their words
        (conjuncts, "for A and B") form one slot answered by all of its entities.
        """
        slots: list[tuple[tuple[str, ...], list[_Path]]] = []
        pred_i = vg.pred.i if vg.pred is not None else -1
        # "starred in the film alongside Y": the film (the topic) is named in the path to Y already
        through = {p.noun.i for p in paths if p.noun is not None}
        paths = [p for p in paths if not (p.topic and p.tok.i in through)]

        def order(p: _Path) -> tuple[bool, int]:  # fronted phrases last; a relative pronoun is no fronting
            at = pred_i if p.tok.lower_ in RELATIVE_PRONOUNS and not p.words else p.tok.i
            return at < pred_i, at

        for path in sorted(paths, key=order):
            words = (*path.words, "|agent" if path.agent else "")
            slot = next((sl for sl in slots if sl[0] == words), None)
            if slot is None:
                slots.append((words, [path]))
            else:
                slot[1].append(path)
        # a long list ("covers A, B, C, D and E") is a set of look-ups, not one event's participants
        slots = [sl for sl in slots if len({p.key for p in sl[1]}) == len(sl[1]) <= _MAX_LISTED][:_MAX_SLOTS]
        if len(slots) < 2:
            return
        name = self.t.get(subj).name if subj else described
        # "is a church in A at B": the describing noun every slot goes through is said once
        prefix = _shared_words([sl[1][0].words for sl in slots])
        cut = len(prefix)
        phrases = [
            _join([*sl[1][0].words[cut:], " and ".join(self.t.get(p.key).name for p in sl[1])])
            for sl in slots
        ]
        keys = [[p.key for p in sl[1]] for sl in slots]
        vp = _join([vg.surface, " ... ".join(_join(sl[1][0].words) or "_" for sl in slots)])
        questions: list[Question] = []
        for i, (_words, members) in enumerate(slots):
            first = members[0]
            o = self.t.get(first.key)
            others = [ph for j, ph in enumerate(phrases) if j != i]
            asked = [*([subj] if subj else []), *(k for j, ks in enumerate(keys) if j != i for k in ks)]
            wh, absorbed = _wh_path(o.type, first)
            if first.words == ["as"] and vg.pred is not None and vg.pred.lemma_ in _ALIAS_VERBS:
                wh = "What"
            tail = first.words[cut:-1] if absorbed else first.words[cut:]
            if first.agent and not first.noun and vg.active_past():
                text = f"{_wh_agent(o.type)} {_join([vg.active_past() or '', name, *others])}?"
            else:
                text = f"{wh} {vg.inverted(name, [*prefix, *others, *tail])}?"
            questions.append(Question(text, asked, [p.key for p in members]))
        if subj:
            everyone = [k for ks in keys for k in ks]
            wh = _wh_subject(self.t.get(subj).type)
            questions.append(Question(f"{wh} {_join([vg.surface, *prefix, *phrases])}?", everyone, [subj]))
        self.facts.append(Fact(subj or keys[0][0], vp, questions))

    def _noun_subject_reversal(self, pred: Token) -> str | None:
        """``The editor-in-chief is Jane Doe``: the attribute entities are the ones described.

        Conjoined attributes all answer ("The wettest months are March and April"); the owner is
        an "of"/"from"/"for" object or a possessive ("The current Representative from District 16
        is X"), else the document's topic. An amount is the value of a measured attribute ("The
        population was 12,741", "The highest recorded temperature is 113 °F"): it becomes an entity
        when the noun is a measure or the amount has a unit, and a measure's owner may also be an
        "in" place ("The drinking age in Wisconsin is 21").
        """
        if pred.lemma_ != "be":
            return None
        subj_tok = next((c for c in pred.children if c.dep_ == "nsubj"), None)
        attr = next((c for c in pred.children if c.dep_ == "attr"), None)
        if (
            subj_tok is None
            or attr is None
            or subj_tok.pos_ not in {"NOUN", "PROPN"}
            or self.t.key_at(subj_tok)
        ):
            return None  # a capitalised office without a name ("The current Senator") is described too
        measure = subj_tok.lemma_.lower() in MEASURE_NOUNS
        keys = []
        for t in coordinated(attr):  # "Its administrative center is the city of Khabarovsk": the city
            if key := self._value(t, measure):
                keys.append(key)
            elif named := self._named_by_kind(t):
                self._take_kind(*named)
                keys.extend(k for k, _tok in named[1])
        keys = [k for i, k in enumerate(keys) if k not in keys[:i]]
        if not keys:
            return None
        words = noun_phrase(subj_tok, self.t)
        if not words:
            return None
        of_target, link = self._owner(subj_tok, measure)
        keys = [k for k in keys if k != of_target]
        if of_target is None or not keys:
            return None
        if measure:
            words = _uncapitalised(words, subj_tok)
        contexts = self._value_contexts(pred, attr, [*keys, of_target], subj_tok if measure else None)
        self._attribute_fact(pred.text, words, (of_target, link), keys, contexts)
        return None

    def _attribute_fact(
        self,
        be: str,
        words: list[str],
        owner: tuple[str, str],
        keys: list[str],
        contexts: list[tuple[str, list[str]]],
    ) -> None:
        """The questions of "the <words> <link> <owner> <be> <keys>", each context naming the others.

        Shared by a value the copula states ("The population was 4,397") and one a measure noun
        takes with "of" ("a low temperature of 9 °F was recorded"), so both ask alike.
        """
        of_target, link = owner
        role = " ".join(w for w in words if w.lower() not in {"the", "a", "an"})
        tgt = self.t.get(of_target)
        phrase = " ".join(_definite(words))
        wh = _wh_subject(self.t.get(keys[0]).type)
        questions = [Question(f"{wh} {be} {phrase} {link} {tgt.name}?", [of_target], keys)]
        one = {"are": "is", "were": "was"}.get(be.lower()) if len(keys) > 1 else None
        for key in keys:
            rec = self.t.get(key)
            rec.add_role(role)
            # several values: each is "one of" them ("What is May one of the wettest months of?")
            ask = (
                f"What {one} {rec.name} one of {phrase} {link}?"
                if one
                else f"What {be} {rec.name} {phrase} {link}?"
            )
            questions.append(Question(ask, [key], [of_target]))
        # "The population was 4,397 at the 2010 census": the census names the others; "113 °F at
        # Perryville on August 9, 1930": the place and the date each name the value and each other
        where = f"{phrase} {link} {tgt.name}"
        values = " and ".join(self.t.get(k).name for k in keys)
        phrases = [_join([prep, " and ".join(self.t.get(k).name for k in ctx)]) for prep, ctx in contexts]
        for i, (_prep, ctx) in enumerate(contexts):
            c = self.t.get(ctx[0])
            others = [ph for j, ph in enumerate(phrases) if j != i]
            other_keys = [k for j, (_p, ks) in enumerate(contexts) if j != i for k in ks]
            questions.append(Question(f"{wh} {be} {where} {phrases[i]}?", [of_target, *ctx], keys))
            ask = _wh_context(c.type)
            clause = _join([be, where, values, *others])
            questions.append(Question(f"{ask} {clause}?", [of_target, *keys, *other_keys], ctx))
        if len(contexts) > 1:
            every = [k for _p, ks in contexts for k in ks]
            questions.append(Question(f"{wh} {_join([be, where, *phrases])}?", [of_target, *every], keys))
        self.facts.append(Fact(keys[0], f"{be} {phrase} {link}", questions))

    def _value(self, tok: Token, measure: bool) -> str | None:
        """The entity an attribute's value names: an amount (read whole: "113 °F (45 °C)") after a
        measure noun or with a unit, else the token's own entity."""
        return self.t.measure_at(tok, unit_needed=not measure) or self.t.key_at(tok)

    def _value_contexts(
        self, pred: Token, attr: Token, taken: list[str], measure: Token | None = None
    ) -> list[tuple[str, list[str]]]:
        """The "at"/"in"/"on" phrases of a stated value, on the verb or on the value itself ("113 °F at
        Perryville"), each with the entities it names, in text order. A measure noun's own time
        phrase counts too: "The average high temperature in July", "The average January high
        temperature" (as "in January")."""
        amounts = {k for k in taken if self.t.get(k).type == "NUMBER"}
        values = [t for m in coordinated(attr) for t in m.subtree if self.t.key_at(t) in amounts]
        # "is 47.2 °C, recorded in June 2015": a participle on the value says when or where it held
        heads = [
            pred,
            *values,
            *(c for v in values for c in v.children if c.dep_ == "acl" and c.tag_ == "VBN"),
        ]
        out: list[tuple[str, list[str]]] = []
        if measure is not None:
            heads.append(measure)
            dated = [
                k
                for c in measure.children
                if c.i < measure.i
                and c.dep_ in {"compound", "npadvmod", "amod", "nmod"}
                and (k := self.t.key_at(c))
                and self.t.get(k).type == "DATE"
                and k not in taken
            ]
            if dated:
                out.append(("in", dated[:1]))
                taken = [*taken, *dated[:1]]
        preps = sorted(
            {
                c.i: c
                for h in heads
                for c in h.children
                if c.dep_ == "prep" and c.lower_ in ABSORBED_PREPS and self.t.key_at(c) is None
            }.values(),
            key=lambda c: c.i,
        )
        for prep in preps:
            ctx = [
                k
                for g in prep.children
                if g.dep_ == "pobj"
                for m in coordinated(g)
                if (k := self.t.key_at(m))
                and k not in taken
                and (prep.head != measure or self.t.get(k).type in {"DATE", "EVENT"})  # "in Guam" owns it
            ]
            ctx = [k for i, k in enumerate(ctx) if k not in ctx[:i]]
            if ctx:
                out.append((prep.lower_, ctx))
                taken = [*taken, *ctx]
        return out

    def _owner(self, noun: Token, measure: bool = False) -> tuple[str | None, str]:
        """Whose ``noun`` is, and the linking word: an "of"/"from"/"for" object, a possessive, else the topic.

        A measure's owner may be a place it is taken "in": "The drinking age in Wisconsin", "The
        highest temperature ever recorded in Guam".
        """
        of_target, link = None, "of"
        if measure:
            holders = [noun, *(c for c in noun.children if c.dep_ == "acl" and c.tag_ == "VBN")]
            of_target = next(
                (
                    k
                    for h in holders
                    for c in h.children
                    if c.dep_ == "prep" and c.lower_ == "in"
                    for g in c.children
                    if g.dep_ == "pobj" and (k := self.t.key_at(g)) and self.t.get(k).type == "PLACE"
                ),
                None,
            )
        for child in noun.children:
            if child.dep_ == "prep" and child.lower_ in {"of", "from", "for"} and of_target is None:
                of_target = next(
                    (self.t.key_at(g) for g in child.children if g.dep_ == "pobj" and self.t.key_at(g)), None
                )
                link = child.lower_
            elif child.dep_ == "poss":
                of_target = self._possessor(child)
                link = "of"
        if of_target is None:
            of_target, link = self.t.title(), "of"
        return of_target, link

    def _inclusion_list(self, pred: Token) -> None:
        """``Notable works include A, B and C``: the listed names are the owner's works.

        The subject is a plural noun without a name; its owner is found as for "The N are A and B"
        (an "of" object, a possessive, else the topic). "What did the works of X include?" is
        answered by every listed name, "What is A one of the works of?" by the owner.
        """
        subj_tok = next((c for c in _subject_tokens(pred) if c.dep_ == "nsubj"), None)
        obj = next((c for c in pred.children if c.dep_ == "dobj"), None)
        if pred.lemma_ not in _LIST_VERBS or subj_tok is None or obj is None or subj_tok.tag_ != "NNS":
            return
        words = noun_phrase(subj_tok, self.t)
        owner, link = self._owner(subj_tok)
        keys = [k for t in coordinated(obj) if (k := self.t.key_at(t)) and k != owner]
        keys = [k for i, k in enumerate(keys) if k not in keys[:i]]
        if not words or owner is None or not keys:
            return
        first = subj_tok.sent[0]
        words = [
            w.lower() if i == 0 and w == first.text and first.pos_ != "PROPN" else w
            for i, w in enumerate(words)
            if w.lower() not in {"other", "another"}
        ]  # "Other major rivers" at a sentence's start: "the major rivers"
        phrase = " ".join(_definite(words))
        noun_type = NOUN_TYPES.get(subj_tok.lemma_.lower())
        be, do = ("was", "did") if pred.tag_ == "VBD" else ("is", "do")
        questions = [Question(f"What {do} {phrase} {link} {self.t.get(owner).name} include?", [owner], keys)]
        for key in keys:
            rec = self.t.get(key)
            rec.add_role(" ".join([*words[1:-1], subj_tok.lemma_]).lower())
            if noun_type and rec.type in {"THING", "PERSON", "ORG"}:
                rec.type = noun_type  # "rivers include the Struma": the noun says what a small NER guesses
            questions.append(Question(f"What {be} {rec.name} one of {phrase} {link}?", [key], [owner]))
        self.facts.append(Fact(owner, f"has {phrase} including", questions))

    def _context_object(self, pred: Token, subj: str) -> tuple[str, str | None] | None:
        """The direct object, as words for a prepositional question ("When did X win <the prize>?")."""
        for child in pred.children:
            if child.dep_ == "dobj":
                key = self.t.key_at(child) or self._topic_noun(child)
                if key and key != subj:
                    return self.t.get(key).name, key
                words = noun_phrase(child, self.t)
                if words and len(words) <= 4 and child.pos_ == "NOUN":
                    return " ".join(words), None
        return None

    def _fact(self, subj: str, vg: VerbGroup, path: _Path, ctx: tuple[str, str | None] | None) -> None:
        s, o = self.t.get(subj), self.t.get(path.key)
        words = list(path.words)
        ctx_words = [ctx[0]] if ctx else []
        ctx_keys = [ctx[1]] if ctx and ctx[1] else []
        if path.noun is None and vg.copula and not words:
            # "X is Y" between two entities: an identity / naming
            if s.type != o.type and "THING" not in {s.type, o.type} and o.type != "NUMBER":
                return
            self.facts.append(
                Fact(
                    subj,
                    f"{vg.surface} {o.name}",
                    [Question(f"What {vg.surface} {s.name}?", [subj], [path.key])],
                )
            )
            return
        # question whose answer is the object
        wh, absorbed = _wh_path(o.type, path)
        if words == ["as"] and vg.pred is not None and vg.pred.lemma_ in _ALIAS_VERBS:
            wh = "What"  # "What is X known as?"
        tail = words[:-1] if absorbed else words
        if path.agent and not path.noun and vg.active_past():
            q_obj = f"{_wh_agent(o.type)} {vg.active_past()} {s.name}?"
        else:
            q_obj = f"{wh} {vg.inverted(s.name, [*ctx_words, *tail])}?"
        # question whose answer is the subject
        kind_words = (
            ["the", path.kind, "of"] if path.kind and path.kind_of else []
        )  # "on the island of Tahiti"
        q_subj = f"{_wh_subject(s.type)} {vg.surface} {_join([*ctx_words, *words, *kind_words])} {o.name}?"
        vp = _join([vg.surface, *ctx_words, *words])
        questions = [
            Question(q_obj, [subj, *ctx_keys], [path.key]),
            Question(q_subj, [path.key, *ctx_keys], [subj]),
        ]
        if o.type == "PLACE" and absorbed and words[-1:] == ["in"] and not path.noun:
            kind = place_kind(o.name)
            if kind:
                clause = vg.inverted(s.name, [*ctx_words, *tail, "in"])
                questions.append(Question(f"What {kind} {clause}?", [subj, *ctx_keys], [path.key]))
        self.facts.append(Fact(subj, vp, questions))

    def _count_fact(self, subj: str, vg: VerbGroup, path: _Path) -> None:
        s, n = self.t.get(subj), self.t.get(path.key)
        noun = path.count_noun.text if path.count_noun is not None else "things"
        words = [w for w in path.words]
        q_num = f"How many {noun} {vg.inverted(s.name, words)}?"
        q_subj = f"{_wh_subject(s.type)} {vg.surface} {_join(words)} {n.name} {noun}?"
        self.facts.append(
            Fact(
                subj,
                _join([vg.surface, *words, noun]),
                [Question(q_num, [subj], [path.key]), Question(q_subj, [path.key], [subj])],
            )
        )

    # ------------------------------------------------------------ appositions
    def _apposition(self, tok: Token) -> None:
        if listed_appositive(tok):
            return  # "A, B, C and D": B is the list's second member, not another name of A
        head = tok.head
        subject = self._closes_subject(tok)
        if subject is not None:
            head = subject  # "The capital of Norway, Oslo, is": Oslo names the capital, not Norway
        head_key = self.resolve(head) if head.pos_ != "NOUN" else self.t.key_at(head)
        tok_key = self.t.key_at(tok)
        if head_key and tok_key and head_key != tok_key:
            h, a = self.t.get(head_key), self.t.get(tok_key)
            if h.type == "PLACE" and a.type == "PLACE":
                if place_kind(h.name) is not None and place_kind(h.name) == place_kind(a.name):
                    return  # "Maries County, Gasconade County": two of a kind are a list, not a nesting
                qs = [Question(f"Where is {h.name} located?", [head_key], [tok_key])]
                kind = place_kind(a.name)
                if kind:
                    qs.append(Question(f"What {kind} is {h.name} in?", [head_key], [tok_key]))
                qs.append(Question(f"What place is located in {a.name}?", [tok_key], [head_key]))
                self.facts.append(Fact(head_key, "is located in", qs))
            elif h.type == a.type or "THING" in {h.type, a.type} and len(a.name.split()) > 1:
                h.add_alias(a.name)  # an apposed name is an alias, never a self-answering "known as" pair
            return
        if head_key and not tok_key and tok.pos_ in {"NOUN", "PROPN"}:
            # "Karl Renner, the chancellor of Austria": a description of the head entity
            self._describe_noun(head_key, tok, "is")
            vg = _CopulaGroup(self._tense_word(tok))
            for path in self._from_noun(tok, []):
                if path.key != head_key:
                    if path.count_noun is None:
                        self._fact(head_key, vg, path, None)
            return
        if tok_key and head.pos_ == "NOUN" and not self.t.key_at(head):
            # "his wife, Mary": the appositive entity is described by the head noun
            self._describe_noun(tok_key, head, "is")
            vg = _CopulaGroup(self._tense_word(head))
            for path in self._from_noun(head, []):
                if path.key != tok_key and path.count_noun is None:
                    self._fact(tok_key, vg, path, None)

    def _closes_subject(self, tok: Token) -> Token | None:
        """The definite subject ``tok`` names as its closing appositive, if any (see ``closing_appositive``)."""
        subject = next((a for a in tok.ancestors if a.dep_ in _SUBJ), None)
        return subject if subject is not None and self._closing_name(subject) == tok else None

    def _closing_name(self, noun: Token) -> Token | None:
        """``closing_appositive`` unless the name is the country or state of a place chain ("The city
        of Bergen, Norway, is")."""
        tok = closing_appositive(noun)
        key = self.t.key_at(tok) if tok is not None else None
        if key is None:
            return None
        host = self.t.key_at(tok.head)
        if (
            host
            and self.t.get(host).type == "PLACE"
            and place_kind(self.t.get(key).name) in {"country", "state"}
        ):
            return None
        return tok

    def _tense_word(self, tok: Token) -> str:
        root = tok.sent.root
        past = root.tag_ in {"VBD", "VBN"} or any(
            c.tag_ == "VBD" for c in root.children if c.dep_ in {"aux", "auxpass"}
        )
        return "was" if past else "is"

    # ------------------------------------------------------------ descriptions
    def _describe(self, subj: str, pred: Token) -> None:
        for child in pred.children:
            if child.dep_ == "attr" and nominal(child) and child.pos_ != "PROPN" and not self.t.key_at(child):
                self._describe_noun(subj, child, pred.lower_)
                self._instance_of(subj, child, VerbGroup(pred, False, self.doc))

    def _instance_of(self, subj: str, noun: Token, vg: VerbGroup) -> None:
        """``X is a Boeing B-29 bomber`` -> "What is X?" answered by the class "Boeing B-29 bomber"."""
        if any(c.dep_ == "poss" or c.dep_ == "prep" and c.lower_ == "of" for c in noun.children):
            return  # "the capital of France" is a relation, not a class
        words = class_phrase(noun, self.t)
        if not words or not any(w[:1].isupper() for w in words):
            return  # a plain class ("comedy film") stays a role: a model makes no entity of it
        key = self.t.add_entity(" ".join(words), "THING", noun.i)
        if key and key != subj:
            rec = self.t.get(subj)
            q = Question(f"What {vg.inverted(rec.name, [])}?", [subj], [key])
            self.facts.append(Fact(subj, f"{vg.surface} a", [q]))

    def _describe_noun(self, subj: str, noun: Token, be: str) -> None:
        """Role and states from "X is an American actor" / "a 1974 single"; NORP and DATE modifiers get QAs."""
        rec = self.t.get(subj)
        noun_type = NOUN_TYPES.get(noun.lemma_.lower())  # first, so the questions below use the type
        if noun_type and (rec.type == "THING" or subj == self.t.title_key and not self.t.title_hint_type):
            rec.type = noun_type
        states: list[str] = []
        role_words: list[str] = []
        for child in noun.children:
            if child.i > noun.i or child.dep_ not in {"amod", "compound", "nummod", "npadvmod"}:
                continue
            key = self.t.key_at(child)
            if key and key != subj:
                mod = self.t.get(key)
                states.append(mod.name)
                if mod.type == "NORP":
                    self._nationality(subj, mod.name, child.i, be)
                elif mod.type == "DATE":
                    self.facts.append(
                        Fact(
                            subj,
                            f"{be} a {mod.name} {noun.text}",
                            [Question(f"What year is the {noun.text} {rec.name} from?", [subj], [key])],
                        )
                    )
                elif mod.type in {"PLACE", "ORG", "PERSON"}:
                    q = f"{'Who' if mod.type == 'PERSON' else 'What'} is {rec.name} a {noun.text} of?"
                    self.facts.append(
                        Fact(subj, f"{be} a {mod.name} {noun.text}", [Question(q, [subj], [key])])
                    )
            elif child.dep_ == "compound":
                role_words.append(child.text.lower())
            elif child.pos_ == "ADJ" or child.tag_ == "VBN":
                states.append(child.text.lower())
        if not any(self.t.get(k).type == "NORP" for k in map(self.t.key_at, noun.children) if k):
            self._nested_nationality(subj, noun, be, states)
        role = " ".join([*role_words, noun.text.lower()])
        rec.add_role(role, states)

    def _nested_nationality(self, subj: str, noun: Token, be: str, states: list[str]) -> None:
        """``an American film and television director``: the parser hangs the nationality on the
        first noun of a compound ("film"), not on the head; it still says where X is from."""
        for child in noun.children:
            if child.i > noun.i or child.dep_ not in {"nmod", "compound"}:
                continue
            for grand in child.children:
                key = self.t.key_at(grand) if grand.i < child.i and grand.dep_ == "amod" else None
                if key and key != subj and self.t.get(key).type == "NORP":
                    states.append(self.t.get(key).name)
                    self._nationality(subj, self.t.get(key).name, grand.i, be)
                    return

    def _nationality(
        self, subj: str, demonym: str, at: int, be: str = "is", countries_only: bool = False
    ) -> None:
        """``a Swedish musician`` / ``the Russian station``: the country answers "What country is X from?".

        The country ("Sweden") takes the adjective as an alias. A person's "What nationality is
        X?" is answered by the adjective itself, the answer a reader expects ("American", not
        "United States"); a group that is no country's people ("Methodist") is kept only for persons.
        """
        rec = self.t.get(subj)
        qs: list[Question] = []
        country = country_of_demonym(demonym)
        if countries_only and not country:
            return  # "Republican Joan Pike": a party, not a nationality
        ckey = self.t.add_entity(country, "PLACE", at) if country else None
        if rec.type == "PERSON":
            key = self.t.add_entity(demonym, "NORP", at)
            if key and key != subj:
                qs.append(Question(f"What nationality is {rec.name}?", [subj], [key]))
        if ckey and ckey != subj:
            self.t.get(ckey).add_alias(demonym)
            qs.append(Question(f"What country is {rec.name} from?", [subj], [ckey]))
            who = "Who" if rec.type == "PERSON" else f"What {_wh_noun(rec.type)}"
            qs.append(Question(f"{who} is from {self.t.get(ckey).name}?", [ckey], [subj]))
        if qs:
            self.facts.append(Fact(subj, f"{be} from", qs))

    def _demonym_modifier(self, tok: Token) -> None:
        """``the Russian Vostok Station``: a nationality adjective before a named entity."""
        key = self.t.key_at(tok)
        if self.t.key_at(tok.head) == key and tok.head.i != tok.i:
            return  # not the head word of its mention
        if self.t.get(key).type in {"DATE", "NUMBER", "NORP"}:
            return
        for child in tok.children:
            ckey = self.t.key_at(child)
            if child.i >= tok.i or child.dep_ not in {"amod", "compound"} or ckey == key:
                continue
            party = party_of_adjective(child.text)
            if party and self.t.get(key).type == "PERSON":
                self._party(key, party, child)
            elif ckey and self.t.get(ckey).type == "NORP":
                self._nationality(key, self.t.get(ckey).name, child.i, countries_only=True)
            elif ckey is None and child.dep_ == "compound" and child.pos_ == "NOUN" and child.is_lower:
                self._title_noun(key, child)
        self._leading_demonym(tok, key)

    def _title_noun(self, key: str, noun: Token) -> None:
        """``Australian club Perth Glory FC`` / ``French engineer Paul Sorel``: a common noun set before a
        name, as a title, says what the named thing is (a role), and a nationality adjective on that
        noun says the country it is from, as "X is an Australian club" would."""
        states = []
        for mod in noun.children:
            mkey = self.t.key_at(mod)
            if mod.i > noun.i or mod.dep_ != "amod" or not mkey or mkey == key:
                continue
            demonym = self.t.get(mkey)
            if demonym.type == "NORP":
                states.append(demonym.name)
                self._nationality(key, demonym.name, mod.i, countries_only=True)
        self.t.get(key).add_role(noun.text.lower(), states)

    def _leading_demonym(self, tok: Token, key: str) -> None:
        """``the Russian Vostok Station`` / ``the Chilean Frei Montalva Station``: the NER often takes a
        nationality adjective into a site's or body's name. The adjective still says the country the
        entity is from, and the name without it ("Vostok Station") is how the entity is mostly called."""
        rec = self.t.get(key)
        span = next(((s, e) for s, e, k in self.t.mention_spans if k == key and s <= tok.i < e), None)
        if span is None or rec.type not in {"PLACE", "ORG", "THING"}:
            return
        words = self.doc[span[0] : span[1]]
        first = words[0]
        if len(words) < 3 or first.pos_ not in {"ADJ", "PROPN"} or not country_of_demonym(first.text):
            return
        if not all(w.text[:1].isupper() for w in words[1:]):
            return
        rec.add_alias(words[1:].text)
        self._nationality(key, first.text, first.i, countries_only=True)

    def _party(self, person: str, party: str, word: Token) -> None:
        """``Republican Tom Hanley`` / ``Democrat Jane Roe``: the party word before a person's name is
        the party they belong to: "What party was X a member of?", "Who was a member of the party?"."""
        if _BODY_WORDS & set(self.t.get(person).name.lower().split()):
            return  # "the Democratic Left Party": a name the NER cut short and typed a person
        key = self.t.key_at(word) or self.t.add_entity(party, "ORG", word.i)
        if not key or key == person:
            return
        be = self._tense_word(word)
        name, pname = self.t.get(person).name, self.t.get(key).name
        qs = [
            Question(f"What party {be} {name} a member of?", [person], [key]),
            Question(f"Who {be} a member of the {pname}?", [key], [person]),
        ]
        self.facts.append(Fact(person, f"{be} a member of", qs))


class VerbGroup:
    """The verb of a predicate with its auxiliaries, able to ask questions around it."""

    def __init__(self, pred: Token, passive: bool, doc: Doc) -> None:
        self.pred = pred
        self.passive = passive
        self.copula = pred.lemma_ == "be"
        self.aux = [c.lower_ for c in pred.children if c.dep_ in {"aux", "auxpass", "neg"} and c.i < pred.i]
        self.particles = [c.lower_ for c in pred.children if c.dep_ == "prt"]
        self.verb = pred.lower_ if pred.pos_ in {"VERB", "AUX"} else pred.text
        self.synthetic = False
        self.tag = pred.tag_
        self.lead: VerbGroup | None = None
        if self.aux[:1] in (["having"], ["being"]):
            # "X, having sold 75 million records, is ..." / "being buried in Y": a clause with no tense
            # of its own takes its sentence's ("How many records has X sold?"); 3.9 asked "How many
            # records having X sold?"
            past = _past_sentence(pred)
            self.aux[0] = {"having": "had" if past else "has", "being": "was" if past else "is"}[self.aux[0]]
            self.synthetic = True
        if self.aux[:1] == ["to"] and pred.tag_ in {"VB", "VBN"} and _realised_infinitive(pred):
            # "the first Sultan to travel to Y": an infinitive's event happened; "did" carries its
            # tense ("Where did X travel to?", "Who did travel to Y?"), whatever the verb's past form,
            # and "was" a passive one's ("the first to be burnt as a martyr": "What was X burnt as?")
            if self.aux == ["to"]:  # a base form after "to" the tagger read as a participle: "to found"
                self.aux, self.synthetic = ["did"], True
            elif self.aux == ["to", "be"] and pred.tag_ == "VBN":
                self.aux, self.synthetic = ["was"], True
        elif self.aux[:1] == ["to"] and (lead := _governing_verb(pred)) is not None:
            # "X is set to premiere in Y" / "X wants to restore Y": the verb that governs the infinitive
            # carries the tense and the subject ("Where is X set to premiere?", "What does X want to
            # restore?"); an infinitive alone would ask "Where to X premiere?"
            self.lead = VerbGroup(lead, any(c.dep_ == "auxpass" for c in lead.children), doc)
        if not self.aux and pred.tag_ in {"VBN", "VBG"} and pred.dep_ in _NONFINITE_DEPS:
            past = _past_sentence(pred) or _dated(pred)  # "a church built in 1850" in a present sentence
            if pred.tag_ == "VBN" and passive:
                self.aux = ["was" if past else "is"]
                self.synthetic = True
            elif pred.tag_ == "VBG":  # "a film starring X" -> "stars" / "does ... star"
                self.tag = "VBD" if past else "VBZ"
                self.verb = _finite(pred.lemma_, self.tag)
        self.surface = _join([*self.aux, self.verb, *self.particles])
        if self.lead is not None:
            self.surface = _join([self.lead.surface, self.surface])

    def inverted(self, subject: str, tail: list[str]) -> str:
        """The clause with the subject after the first auxiliary: ``was X born in``."""
        pred = self.pred
        if self.lead is not None:
            return self.lead.inverted(subject, [*self.aux, self.verb, *self.particles, *tail])
        if self.copula and not self.aux:
            return _join([self.verb, subject, *tail])
        if self.aux:
            return _join([self.aux[0], subject, *self.aux[1:], self.verb, *self.particles, *tail])
        do = {"VBD": "did", "VBZ": "does", "VBP": "do"}.get(self.tag, "did")
        return _join([do, subject, pred.lemma_, *self.particles, *tail])

    def active_past(self) -> str | None:
        """``was directed`` -> ``directed``: the active form for agent questions."""
        if not self.passive or self.pred.tag_ != "VBN":
            return None
        if not self.synthetic and any(a in {"is", "are", "has", "have", "not", "n't"} for a in self.aux):
            return None
        return _join([past_of_participle(self.pred.lower_), *self.particles])


class _CopulaGroup(VerbGroup):
    """A copula supplied for appositions ("X, the chancellor of Y" -> "X was the chancellor of Y")."""

    def __init__(self, be: str) -> None:  # noqa: D107 - no spaCy token behind it
        self.pred = None
        self.copula = True
        self.passive = False
        self.aux = []
        self.particles = []
        self.be = be
        self.surface = be

    def inverted(self, subject: str, tail: list[str]) -> str:
        return _join([self.be, subject, *tail])

    def active_past(self) -> str | None:
        return None


def noun_phrase(noun: Token, table: EntityTable) -> list[str] | None:
    """Compact words of a describing noun ("the first president"), or None if it names an entity."""
    words: list[tuple[int, str]] = [(noun.i, noun.text)]
    for child in noun.children:
        if child.i > noun.i:
            continue
        if table.key_at(child):
            continue
        if child.dep_ in {"det", "amod", "compound", "nummod"} and child.dep_ != "poss":
            # an article opening the sentence ("The capital of X, Y, ...") is lower case inside a question
            article = child.dep_ == "det" and child.lower_ in {"the", "a", "an"}
            words.append((child.i, child.lower_ if article else child.text))
    words.sort()
    out = [w for _i, w in words]
    if len(out) > _MAX_PHRASE:
        out = [w for w in out[:1] if w.lower() in {"the", "a", "an"}] + out[-2:]
    return out


def _uncapitalised(words: list[str], noun: Token) -> list[str]:
    """``Annual precipitation`` at a sentence's start: "annual precipitation" inside a question."""
    first = noun.sent[0]
    return [
        w.lower() if i == 0 and w == first.text and first.pos_ != "PROPN" else w for i, w in enumerate(words)
    ]


def _subject_tokens(verb: Token) -> list[Token]:
    """The predicate's children, then those of its auxiliaries: the small parser sometimes hangs the
    subject on the auxiliary ("The plan was [<- subject] later revised by ...")."""
    aux = [c for c in verb.children if c.dep_ in {"aux", "auxpass"} and c.i < verb.i]
    return [*verb.children, *(g for a in aux for g in a.children)]


def _one_of_places(one: Token) -> list[Token]:
    """``a district, one of the seventeen in Khabarovsk Krai``: the place that "one of the N in" names
    is where the noun the "one" stands beside is; the parser hangs the "in" on the count."""
    return [
        pobj
        for of in one.children
        if of.dep_ == "prep" and of.lower_ == "of"
        for count in of.children
        if count.dep_ == "pobj"
        for prep in count.children
        if prep.dep_ == "prep" and prep.lower_ == "in"
        for pobj in prep.children
        if pobj.dep_ == "pobj"
    ]


def _misplaced_agent(pred: Token, pobj: Token) -> Token | None:
    """``was defeated in the 1942 primary by James Eastland``: the small parser hangs the agent's "by"
    on the noun before it; on a passive verb with no agent of its own, that "by" is the verb's agent."""
    if not any(c.dep_ == "auxpass" for c in pred.children) or any(c.dep_ == "agent" for c in pred.children):
        return None
    return next((c for c in pobj.children if c.dep_ == "prep" and c.lower_ == "by"), None)


def _shared_subject(pred: Token) -> Token | None:
    """The predicate's subject word, or the one it shares as a conjunct: in "The house was built in 1825
    and was added to the Register in 1986" "added" has no subject of its own; a reader takes the
    first verb's, and so do the rules that read an unnamed subject noun ("the house" as the topic)."""
    for _hop in range(3):
        tok = next((c for c in _subject_tokens(pred) if c.dep_ in _SUBJ), None)
        if tok is not None or pred.dep_ != "conj" or pred.head.pos_ not in {"VERB", "AUX"}:
            return tok
        pred = pred.head
    return None


def listed_appositive(tok: Token) -> bool:
    """``Jim Hale, Bob Ogle, Ann Lee and Tom Cole``: the parser makes the second name an apposition of the
    first and hangs the rest on it as conjuncts. An appositive a conjunction continues is a list member."""
    return tok.dep_ == "appos" and any(c.dep_ == "conj" for c in tok.children)


def located_fact(table: EntityTable, inner: str, outer: str, what: str = "What place") -> Fact:
    """``inner`` lies in ``outer``: "Where is A located?", "What place is located in B?" and, for a
    known kind of place, "What state is A in?". ``what`` asks for the inner one: "What" where it
    need not be a place ("the Atbarah River in northeast Africa")."""
    name, where = table.get(inner).name, table.get(outer).name
    qs = [
        Question(f"Where is {name} located?", [inner], [outer]),
        Question(f"{what} is located in {where}?", [outer], [inner]),
    ]
    kind = place_kind(where)
    if kind:
        qs.append(Question(f"What {kind} is {name} in?", [inner], [outer]))
    return Fact(inner, "is located in", qs)


def closing_appositive(noun: Token) -> Token | None:
    """``The longest river in Norway, the Kelm, flows ...``: the parser hangs a name set off by commas
    on the nearest noun before it ("Norway"), but a name closing a definite common-noun subject right
    before its verb names the subject itself ("the longest river")."""
    if noun.dep_ not in _SUBJ or noun.pos_ != "NOUN" or not any(c.lower_ == "the" for c in noun.children):
        return None
    verb, doc = noun.head, noun.doc
    last = noun.right_edge.i
    while last > noun.i and doc[last].is_punct:  # the closing comma may hang on the subject
        last -= 1
    if last + 1 >= len(doc) or doc[last + 1].text != "," or verb.i <= last:
        return None
    if any(t.dep_ not in {"advmod", "aux", "auxpass", "neg"} for t in doc[last + 2 : verb.i]):
        return None
    for tok in doc[noun.i + 1 : last + 1]:
        if (
            (tok.dep_ == "appos" or tok.dep_ == "npadvmod" and tok.pos_ == "PROPN")
            and tok.head.i != noun.i
            and tok.right_edge.i == last
            and doc[tok.left_edge.i - 1].text == ","
            and not listed_appositive(tok)
        ):
            return tok
    return None


def _joint_list(tok: Token) -> bool:
    """``between A, B and C`` / ``six counties -- A, B and C``: ``tok`` is a member of a list whose
    members are taken together (the objects of "between", an enumeration in apposition to a plural noun)."""
    if _plural_noun(tok) and any(c.dep_ == "appos" and c.i > tok.i for c in tok.children):
        return True  # the plural noun itself, when it carries its first member's name
    first = tok
    while first.dep_ == "conj" and first.head.i < first.i:
        first = first.head
    if first.dep_ == "pobj" and first.head.lower_ == "between":
        return True
    return first.dep_ == "appos" and _plural_noun(first.head)


def _listed_before(noun: Token) -> list[Token]:
    """``Guilford and Rockingham Counties`` / ``Crawford and Dent counties``: the words a plural noun
    lists before it (its name modifiers and their conjuncts), in order; none for a singular noun."""
    if noun.tag_ not in {"NNS", "NNPS"}:
        return []
    return [
        m for c in noun.children if c.dep_ in {"nmod", "compound"} and c.i < noun.i for m in [c, *c.conjuncts]
    ]


def _plural_place(noun: Token) -> bool:
    """A plural noun of a kind of place ("counties", "Counties")."""
    return noun.tag_ in {"NNS", "NNPS"} and NOUN_TYPES.get(_singular(noun.lower_)) == "PLACE"


def _singular(word: str) -> str:
    """A rough singular of a plural noun ("counties" -> "county"), enough to look a kind of place up."""
    if word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if word.endswith("s") else word


def _plural_noun(tok: Token) -> bool:
    return tok.pos_ == "NOUN" and tok.tag_ in {"NNS", "NNPS"}


def _kind_noun(rec: EntityRecord) -> str:
    """The noun for "which other ...?" asking for ``rec``: its kind of place ("county"), "year" for a
    bare year, else a noun of its type."""
    if rec.type == "PLACE":
        return place_kind(rec.name) or "place"
    if rec.type == "DATE":
        return "year" if rec.name.isdigit() else "date"
    return _wh_noun(rec.type)


def _conjoined_prep(tok: Token) -> bool:
    """``flows to X and finally to Y``: the parser hangs a second preposition phrase on the verb as a
    conjunct, not a preposition; it is one more of the verb's preposition phrases all the same."""
    return tok.dep_ == "conj" and tok.pos_ == "ADP" and tok.head.pos_ in {"VERB", "AUX"}


def coordinated(tok: Token) -> list[Token]:
    """``tok`` and the later members of its list, including those of a list the parser read as an apposition."""
    members = [tok, *(c for c in tok.conjuncts if c.i > tok.i)]
    for member in list(members):
        for child in member.children:
            if child.i > member.i and listed_appositive(child):
                members.extend(m for m in [child, *child.conjuncts] if m.i > member.i and m not in members)
    return members


def _trailing_adjectives(noun: Token) -> list[Token]:
    """``the lead single from ...``: the small parser reads "single" as an adjective after "lead" and hangs
    the noun's prepositions on it; such a word belongs to the noun phrase and its prepositions to the noun."""
    return [
        c
        for c in noun.children
        if c.dep_ == "amod" and c.i == noun.i + 1 and all(g.dep_ == "prep" for g in c.children)
    ]


def _participle_governor(noun: Token) -> Token | None:
    """The participle (acl/advcl/conj VBN or VBG) whose object or agent ``noun`` is, if any."""
    tok = noun
    while tok.dep_ == "conj":
        tok = tok.head
    if tok.dep_ == "pobj" and tok.head.dep_ in {"agent", "prep"}:
        verb = tok.head.head
    elif tok.dep_ == "dobj":
        verb = tok.head
    else:
        return None
    if verb.tag_ in {"VBN", "VBG"} and verb.dep_ in {"acl", "advcl", "conj", "relcl"}:
        return verb
    return None


def _gerund_governor(verb: Token) -> Token | None:
    """``flows through A before joining B`` / ``won the title after beating C``: a gerund that is the
    object of a preposition on a verb has no subject of its own; English gives it the subject of that
    verb. Returns the verb, or None (not a gerund, or its preposition hangs on a noun)."""
    if verb.dep_ != "pcomp" or verb.tag_ != "VBG" or any(c.dep_ in _SUBJ for c in verb.children):
        return None
    prep = verb.head
    if prep.dep_ != "prep" or prep.head.pos_ not in {"VERB", "AUX"}:
        return None
    return prep.head


def nominal(tok: Token) -> bool:
    """A noun-like token (spaCy tags "a 1974 single" as an adjective)."""
    if tok.pos_ in {"NOUN", "PROPN", "NUM"}:
        return True
    return (
        tok.pos_ == "ADJ"
        and tok.dep_ in {"attr", "dobj", "pobj", "appos"}
        and any(c.dep_ == "det" for c in tok.children)
    )


def _past_sentence(pred: Token) -> bool:
    """Whether the sentence around a clause without a tense of its own tells the past."""
    root = pred.sent.root
    return root.tag_ == "VBD" or any(c.tag_ == "VBD" for c in root.children if c.dep_ in {"aux", "auxpass"})


def _stands_for_people(tok: Token, etype: str) -> bool:
    """A nationality or a bare count standing as a noun for people nobody names ("became the first
    Chilean born in Antarctica", "eight at the Esperanza Base and three at ..."): no participant of
    an event ("Where was Chilean born?", "Where were eight born?"). The nationality rules read such
    words through their own paths."""
    if tok.dep_ not in _SUBJ | _OBJ | {"pobj", "appos", "conj"}:
        return False
    if etype == "NORP":  # one of a nation ("a German", "the first Chilean"), not a people ("the Dutch")
        children = list(tok.children)
        one = any(c.dep_ == "det" and c.lower_ in {"a", "an"} for c in children) or (
            any(c.dep_ == "det" and c.lower_ == "the" for c in children)
            and any(c.dep_ == "amod" for c in children)
        )
        compound = any(c.dep_ == "compound" for c in children)  # "Han Chinese"
        return one and not compound and country_of_demonym(tok.text) is not None
    return etype == "NUMBER" and tok.pos_ == "NUM" and tok.dep_ in _SUBJ and not list(tok.children)


def class_phrase(noun: Token, table: EntityTable) -> list[str] | None:
    """The class a description names, without article, dates or nationality: "rock band"."""
    left = [c for c in noun.subtree if c.i < noun.i and c.i >= noun.left_edge.i]
    words: list[str] = []
    for tok in left:
        key = table.key_at(tok)
        if tok.dep_ in {"det", "poss", "case", "punct", "cc", "conj", "predet", "advmod"} and tok.text != "-":
            continue
        if key and table.get(key).type in {"DATE", "NUMBER", "NORP"}:
            continue
        if tok.pos_ in {"NUM", "ADV"} or tok.tag_ == "POS":
            continue
        words.append(tok.text)
    words.append(noun.text)
    text = " ".join(words).replace(" - ", "-").replace(" -", "-").replace("- ", "-")
    words = text.split()
    if len(words) > _MAX_PHRASE:
        words = words[-_MAX_PHRASE:]
    return words


def _finite(lemma: str, tag: str) -> str:
    if tag == "VBD":
        return simple_past(lemma)
    if lemma in {"be", "have"}:  # 3.9 asked "What bes X the director of?", "What haves ...?"
        return {"be": "is", "have": "has"}[lemma]
    if lemma.endswith(("s", "sh", "ch", "x", "z", "o")):
        return lemma + "es"
    if lemma.endswith("y") and len(lemma) > 2 and lemma[-2] not in "aeiou":
        return lemma[:-1] + "ies"
    return lemma + "s"


def _definite(words: list[str]) -> list[str]:
    if words and words[0].lower() in {"a", "an", "the", "his", "her", "its", "their"}:
        return ["the", *words[1:]]
    return ["the", *words]


def _wh_agent(etype: str) -> str:
    return "Who" if etype in {"PERSON", "ORG", "THING", "NORP"} else "What"


def _wh_noun(etype: str) -> str:
    """A noun for "What ... is from Y?" by type: "person", "place", "organization", else "thing"."""
    return {
        "PERSON": "person",
        "PLACE": "place",
        "ORG": "organization",
        "WORK": "work",
        "EVENT": "event",
    }.get(etype, "thing")


def _wh_subject(etype: str) -> str:
    return "Who" if etype == "PERSON" else "What"


def _participle_as_past(verb: Token) -> bool:
    """``a film edited and directed by X``: a participle modifying a noun that the tagger took for a
    past tense (an "acl" verb tagged VBD), known by the passive participle conjoined to it."""
    return (
        verb.dep_ == "acl"
        and verb.tag_ == "VBD"
        and any(c.dep_ == "conj" and c.tag_ == "VBN" and _has_agent(c) for c in verb.children)
    )


def _retag_participles(doc: Doc) -> None:
    """``a church built in 1850``: the small tagger often reads a participle that modifies a noun as a
    past tense (an "acl" tagged VBD). A verb hung on a noun without a subject of its own is a
    participle; where its past and participle share a form ("built", "founded"), it is retagged
    VBN so that every rule reads it as the passive it is."""
    for tok in doc:
        if (
            tok.dep_ == "acl"
            and tok.tag_ == "VBD"
            and participle_of_past(tok.lower_) == tok.lower_
            and not any(c.dep_ in _SUBJ for c in tok.children)
        ):
            tok.tag_ = "VBN"


def _realised_infinitive(verb: Token) -> bool:
    """``the first woman to climb Y`` / ``He was the last king to rule Z``: an infinitive on a noun, or
    after a copula whose noun is ranked (first, last, only, an ordinal or a superlative), tells an
    event that happened; one after "wants" or "plans" does not."""
    if verb.dep_ in {"acl", "relcl"}:
        return True
    head = verb.head
    if (
        verb.dep_ in {"advcl", "xcomp"}
        and head.lemma_ == "go"
        and any(c.lower_ == "on" for c in head.children)
    ):
        return True  # "He went on to found Y": what someone went on to do, they did
    if verb.dep_ != "xcomp" or head.lemma_ != "be":
        return False
    attr = next((c for c in head.children if c.dep_ == "attr"), None)
    return attr is not None and any(
        c.dep_ == "amod"
        and (c.lower_ in {"first", "last", "only"} or c.tag_ == "JJS" or _ORDINAL_WORD.match(c.text))
        for c in attr.children
    )


def _bare_infinitive(verb: Token) -> bool:
    """An infinitive that neither tells a realised event nor has a finite verb to ask it through:
    its questions would open on "to" ("Who to X select?")."""
    group = VerbGroup(verb, False, verb.doc)
    return group.aux[:1] == ["to"] and group.lead is None


def _governing_verb(verb: Token) -> Token | None:
    """The finite verb whose subject an infinitive shares ("X is set to premiere", "X wants to
    restore Y", "X is to be held"): the head of an open complement, itself a finite verb or copula
    before it (an infinitive on an infinitive is left alone, as is one with a subject of its own:
    "want him to select Y" is not something X wants to do)."""
    head = verb.head
    if verb.dep_ != "xcomp" or head.i > verb.i or head.pos_ not in {"VERB", "AUX"}:
        return None
    if any(c.dep_ == "aux" and c.lower_ == "to" for c in head.children) or head.tag_ == "VBG":
        return None
    if head.tag_ == "VBN" and not any(c.dep_ in {"aux", "auxpass"} for c in head.children):
        return None  # a bare participle ("a film set to premiere"): nothing finite to carry the tense
    return head


def _dated(verb: Token) -> bool:
    """Whether a preposition of ``verb`` names a date ("built in 1850", "founded on 4 May 1921")."""
    return any(
        g.ent_type_ == "DATE"
        for c in verb.children
        if c.dep_ == "prep"
        for g in c.subtree
        if g.dep_ == "pobj"
    )


def _has_agent(verb: Token) -> bool:
    """Whether ``verb`` has a "by" agent: a passive participle ("directed by X")."""
    return any(c.dep_ == "agent" for c in verb.children)


def _wh_object(etype: str, words: list[str], via_noun: bool) -> tuple[str, bool]:
    """(wh-word, whether the last preposition is absorbed by it)."""
    last = words[-1] if words else ""
    if etype == "DATE" and not via_noun:
        if last in _RANGE_PREPS:
            return "Until when", True  # "served from 1951 to 1957" -> "Until when did X serve?"
        if last in {"from", "since"}:
            return f"{last.capitalize()} when", True
        return "When", last in ABSORBED_PREPS | {"between"}
    if etype == "PLACE" and not via_noun and (last in ABSORBED_PREPS or last in {"to", "from"}):
        return "Where", last in ABSORBED_PREPS
    if etype == "PERSON":
        return "Who", False
    return "What", False


def _wh_path(etype: str, path: _Path) -> tuple[str, bool]:
    """The wh-phrase asking for a path's entity: its kind when a kind noun introduced it ("What
    island"), else as :func:`_wh_object` words it."""
    if path.kind:
        return f"What {path.kind}", False
    return _wh_object(etype, path.words, path.noun is not None)


def _prep_child(tok: Token, word: str) -> Token | None:
    """``tok``'s first preposition ``word`` ("of" in "a rainfall of 40 inches"), or None."""
    return next((c for c in tok.children if c.dep_ == "prep" and c.lower_ == word), None)


def _pobj(prep: Token | None) -> Token | None:
    """The first object of the preposition ``prep``, or None (also for no preposition)."""
    return next((g for g in prep.children if g.dep_ == "pobj"), None) if prep is not None else None


def _wh_context(etype: str) -> str:
    """The wh-word asking for a context of a value: a date or event "When", a place "Where"."""
    return "When" if etype in {"DATE", "EVENT"} else "Where" if etype == "PLACE" else "What"


def _shared_words(paths: Sequence[Sequence[str]]) -> tuple[str, ...]:
    """The words every path starts with, short of a path's last word (its preposition): the
    describing noun of "a church in A" and "a church at B"; () when the paths start apart."""
    shared: list[str] = []
    for words in zip(*paths, strict=False):
        if len(set(words)) != 1:
            break
        shared.append(words[0])
    return tuple(shared[: min(len(p) for p in paths) - 1]) if paths else ()


def _join(words: list[str]) -> str:
    return " ".join(w for w in words if w).replace(" 's", "'s").strip()


def participle(pred: Token) -> str:
    """The past participle of a predicate, for passive questions."""
    if pred.tag_ == "VBN":
        return pred.text
    return participle_of_past(pred.text) if pred.tag_ == "VBD" else pred.text

"""A document title the parser read as words of the sentence, parsed again as one name.

Why: a title that reads as a clause or a phrase ("Raise Your Voice is a 2004 American film
directed by Sean McNamara", "Hot Saturday is ...", "Marry Me Again is ...", "Christ Walking on
the Water is ...") is parsed as the sentence's own verb, adverb or modifier, so the sentence has
no subject and the relation rules find nothing in it, the film's director included. The title
is known (the document's), so where the text writes it word for word it can be read as one
name: the parser sees a stand-in name in its place (:func:`reparse`). Only such texts are parsed
again: a title the parser already read as a noun phrase keeps its parse, and the named entities
of the first parse are kept in every case, so the change is only in the tree. The same module
reads the other names a text gives its title as the title's aliases ("A or B is ...", "B (released
as A) is ...").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from spacy.language import Language
from spacy.tokens import Doc, Span, Token

#: Dependencies a name may hold in a sentence; a title whose head token holds another (a clause
#: subject, an adverb, a modifier, the sentence's root verb) was read as something else.
NOMINAL_DEPS = frozenset(
    {"nsubj", "nsubjpass", "dobj", "iobj", "pobj", "attr", "appos", "conj", "poss", "dative", "oprd"}
)
NOMINAL_POS = frozenset({"PROPN", "NOUN", "NUM"})
#: Dependencies of a word inside a longer name ("The John Murray Show").
PART_OF_A_NAME = frozenset({"compound", "flat"})


#: "<title> or <another name> is ...": the other name, up to the verb or an aside opening.
_ALTERNATIVE = re.compile(r" or (?P<alt>[^\W\d_][^()]{0,58}?)(?= (?:is|was|are|were) |\s?\()")


def without_alternative_name(text: str, title: str) -> tuple[str, str | None]:
    """``Second Youth or Druga młodość is a 1938 film``: the text without " or <other name>" after
    the title that opens it, and that other name (an alias of the title). Why: the parser reads
    "A or B" as two things, and the relation rules gave the sentence's facts to the second name
    ("musée bas" for "A Day at the Museum or Musée haut, musée bas is a 2008 French film")."""
    if not title or not text.startswith(title):
        return text, None
    match = _ALTERNATIVE.match(text, len(title))
    if match is None or len(match["alt"].split()) > 8:
        return text, None
    return text[: len(title)] + text[match.end() :], match["alt"].strip()


#: "<another name> (<an aside naming the title>) is ...": the text opens on another name of its title.
_NAMED_IN_ASIDE = re.compile(r"(?P<name>[^()]{1,80}?)\s*\((?P<aside>[^()]*)\)")


def title_from_aside(text: str, title: str) -> tuple[str, str | None]:
    """``Un giorno da leoni (internationally released as A Day for Lionhearts) is a 1961 film``,
    in the document "A Day for Lionhearts": the text opening on the title, and the name it
    opened on (an alias of the title). Why: the facts went to a name no question about the
    document uses, while the title stood only in an aside, which is cut before parsing."""
    if not title or text.startswith(title):
        return text, None
    match = _NAMED_IN_ASIDE.match(text)
    if match is None or len(match["name"].split()) > 8 or not _names_the_title(match["aside"], title):
        return text, None
    other = match["name"].strip(" \"'")
    if not other or other == title:
        return text, None
    return title + text[match.end("name") :], other


def _names_the_title(aside: str, title: str) -> bool:
    """Whether ``aside`` gives ``title`` as a name of its own ("English: X", "released as X", "also X
    or Y"), not as a part of another ("Socialist Party of Austria [...]" does not name Austria)."""
    for match in re.finditer(re.escape(title), aside):
        before, after = aside[: match.start()], aside[match.end() :]
        if (
            len(before.split()) <= 5
            and (not before or not before[-1].isalnum())
            and re.match(r"\s*(?:$|[,;\"'”]|or\b)", after)
        ):
            return True
    return False


def title_spans(doc: Doc, title: str) -> list[Span]:
    """Where ``doc`` writes ``title`` word for word (case kept) over two tokens or more."""
    if not title or " " not in title:
        return []
    spans = []
    for match in re.finditer(re.escape(title), doc.text):
        span = doc.char_span(match.start(), match.end())
        if span is not None and len(span) > 1:
            spans.append(span)
    return spans


def misread(doc: Doc, title: str) -> list[Span]:
    """The places where ``doc`` writes ``title`` and the parser did not read it as a name."""
    return [span for span in title_spans(doc, title) if _misparsed(span)]


def _misparsed(span: Span) -> bool:
    """Whether the parser read ``span`` as something other than one noun phrase: more than one
    of its tokens hangs outside it, or the one that does is not a noun in a noun's place. Part
    of a longer name ("The John Murray Show" for the title "John Murray") is not misread."""
    doc = span.doc
    if any(e.start <= span.start and span.end <= e.end and len(e) > len(span) for e in doc.ents):
        return False
    heads = [t for t in span if not span.start <= t.head.i < span.end or t.head.i == t.i]
    if len(heads) != 1:
        return True
    return not _reads_as_a_name(heads[0], len(span))


def _reads_as_a_name(token: Token, width: int) -> bool:
    if token.dep_ in PART_OF_A_NAME:
        return True
    if token.dep_ == "ROOT":
        return width >= len(token.sent) - 1  # a sentence (or heading) that is only the title
    return token.dep_ in NOMINAL_DEPS and token.pos_ in NOMINAL_POS


def reparse(nlp: Language, misreads: Sequence[Sequence[Span]], batch_size: int) -> list[Doc | None]:
    """Each doc parsed again with its misread title occurrences (one list per doc, as
    :func:`misread` found them) as one token each, its entities kept; None for a doc whose new
    parse does not read every such token as a name either (the first parse stays).

    The parser sees a stand-in name (:data:`STAND_IN`) where the title stands: one token made
    of several words has features the model never saw ("Run Home Slowly" ends like an adverb
    and was tagged as one), while a known name reads as a name wherever a name can stand. The
    returned doc has the real words, the title as one proper-noun token, and the stand-in's
    parse. The first parse's entities carry over by character offsets, a title's own label only when
    an entity spanned the whole title: one covering part of it ("Flash Gordon" as a person in
    "Flash Gordon Conquers the Universe") would type the whole title by its part. The entity
    recogniser does not run again."""
    docs = [spans[0].doc for spans in misreads]
    plans = [_plan(spans) for spans in misreads]
    stream = iter([Doc(nlp.vocab, words=words, spaces=spaces) for words, spaces, _slots in plans])
    for name, component in nlp.pipeline:
        if name == "ner":
            continue
        stream = (
            component.pipe(stream, batch_size=batch_size)
            if hasattr(component, "pipe")
            else map(component, stream)
        )
    out: list[Doc | None] = []
    for old, stand, (_words, spaces, slots) in zip(docs, stream, plans, strict=True):
        if not slots or not all(_reads_as_a_name(stand[i], 1) for i in slots):
            out.append(None)
            continue
        words = [slots.get(t.i, t.text) for t in stand]
        new = Doc(
            nlp.vocab,
            words=words,
            spaces=spaces,
            tags=["NNP" if t.i in slots else t.tag_ for t in stand],
            pos=["PROPN" if t.i in slots else t.pos_ for t in stand],
            morphs=["" if t.i in slots else str(t.morph) for t in stand],
            lemmas=[words[t.i] if t.i in slots else t.lemma_ for t in stand],
            heads=[t.head.i for t in stand],
            deps=[t.dep_ for t in stand],
        )
        _carry_entities(old, new)
        out.append(new)
    return out


#: The name the parser sees in place of a misread title: a title, short, known to the model.
STAND_IN = "Casablanca"


def _plan(misread_spans: Sequence[Span]) -> tuple[list[str], list[bool], dict[int, str]]:
    """The words and spaces of the spans' doc with each span as :data:`STAND_IN`, and the
    positions of the stand-ins with the text they stand for."""
    doc = misread_spans[0].doc
    spans = {span.start: span for span in misread_spans}
    words: list[str] = []
    spaces: list[bool] = []
    slots: dict[int, str] = {}
    i = 0
    while i < len(doc):
        span = spans.get(i)
        if span is not None:
            slots[len(words)] = span.text
            words.append(STAND_IN)
            spaces.append(bool(span[-1].whitespace_))
            i = span.end
            continue
        words.append(doc[i].text)
        spaces.append(bool(doc[i].whitespace_))
        i += 1
    return words, spaces, slots


def _carry_entities(old: Doc, new: Doc) -> None:
    ents: list[Span] = []
    for ent in old.ents:  # disjoint in the old doc, so in the new one too
        span = new.char_span(ent.start_char, ent.end_char, label=ent.label_)
        if span is not None:  # None: part of a title only ("Flash Gordon" of "Flash Gordon Conquers ...")
            ents.append(span)
    new.set_ents(ents, default="outside")

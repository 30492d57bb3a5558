"""Questions for the names no other rule reached, read off the clause that names them.

The relation rules write a question only where they recognise a sentence's shape; a name deeper
in a clause ("one of the base villages for the trek to Prachitgad") is left out of the memory
altogether, though the subject the clause is about is known. This last pass takes each such
name, walks up the parse to the clause's verb, and, when that verb's subject is another entity,
asks the clause both ways: the subject with the name turned into a wh-phrase ("Shringarpur is one
of the base villages for the trek to which place?") and the name with the subject turned into
one ("What is one of the base villages for the trek to Prachitgad?"). Only the words on the path
from the verb to the name and their modifiers are kept, so the question stays close to what the
sentence says of the two, and a name inside the subject itself or in a clause too long to ask
plainly gets no question.
"""

from __future__ import annotations

from spacy.tokens import Token

from engramdb.ingestion.extraction.rules_lexicon import NOUN_TYPES
from engramdb.ingestion.extraction.rules_relations import (
    _ALIAS_VERBS,
    Fact,
    Question,
    RelationRules,
    _finite,
    _subject_tokens,
    _wh_noun,
    coordinated,
)

# Children that keep their whole subtree in the question: they qualify the word they hang on
_MODIFIERS = frozenset({"det", "amod", "compound", "nummod", "poss", "case", "quantmod", "nmod", "predet"})
# Children of the verb kept with it: its auxiliaries, negation and particle
_VERB_PARTS = frozenset({"aux", "auxpass", "neg", "prt"})
# Links on the way up that leave the clause or its plain structure ("themselves part of ...")
_CLAUSE_DEPS = frozenset({"relcl", "acl", "advcl", "npadvmod", "appos", "conj", "dep", "parataxis", "ccomp"})
# Where a name stands as a thing of its own: an object, a preposition's object, a copula's noun
_NAME_DEPS = frozenset({"pobj", "dobj", "attr", "oprd", "dative", "pcomp"})
_MAX_WORDS = 16  # a longer question is a paraphrase of the sentence, not a question about two things
_MAX_UP = 7  # steps from the name up to its clause's verb
_TYPES = frozenset({"PERSON", "ORG", "PLACE", "DATE", "WORK", "EVENT", "NUMBER"})


def clause_facts(rules: RelationRules, facts: list[Fact]) -> list[Fact]:
    """Facts for the named entities that no fact in ``facts`` mentions."""
    table = rules.t
    linked = {k for f in facts for q in f.questions for k in (*q.asked, *q.answers)}
    seen: set[str] = set()
    out: list[Fact] = []
    for start, end, key in sorted(table.mention_spans):
        if key in linked or key in seen or table.get(key).type not in _TYPES:
            continue
        seen.add(key)
        fact = _clause_fact(rules, start, end, key, linked)
        if fact is not None:
            out.append(fact)
    return out


def _clause_fact(rules: RelationRules, start: int, end: int, key: str, linked: set[str]) -> Fact | None:
    doc, table = rules.doc, rules.t
    root = doc[start:end].root
    if root.dep_ == "conj":
        return None  # a later member of a list answers with the first one (below)
    rec = table.get(key)
    etype = rec.type
    # "near Alampur village": the name of the kind of place right after it (not "the U.S. state of X")
    named_kind = (
        root.dep_ == "compound"
        and root.head.i == end
        and NOUN_TYPES.get(root.head.lemma_) == etype
        and etype in {"PLACE", "ORG"}
        and not any(c.dep_ == "prep" and c.lower_ == "of" for c in root.head.children)
    )  # not "a 1955 American film": a work's describing words are no name of it
    counted = (
        root.dep_ == "nummod"
        and etype == "NUMBER"
        and root.head.pos_ == "NOUN"
        and not any(t.is_punct for t in doc[end : root.head.i])
    )  # "into 4 congressional districts", not "a two-reel western"
    if end < len(doc) and doc[end].dep_ == "case":
        return None  # an owner ("X's"): what it owns is the thing the clause speaks of
    if root.dep_ not in _NAME_DEPS and not named_kind and not counted:
        return None  # a word inside another noun's phrase ("a 1945 novel", "Senior Judge"): not what it is
    path = [root]
    verb = root.head
    while verb.pos_ not in {"VERB", "AUX"} and verb.head.i != verb.i and len(path) < _MAX_UP:
        path.append(verb)
        verb = verb.head
    if any((k := table.key_at(t)) and table.get(k).type == "PLACE" for t in path[1:]):
        return None  # "the Sayan Mountains in the Krasnoyarsk Krai of Russia": Russia's partner is the krai
    if verb.pos_ not in {"VERB", "AUX"} or verb.i == root.i or verb.tag_ == "VB":
        return None  # no verb, or an infinitive or imperative ("to develop X"), which says no fact
    subject_tokens = [c for c in _subject_tokens(verb) if c.dep_ in {"nsubj", "nsubjpass"}]
    if any(root in s.subtree for s in subject_tokens) or any(t.dep_ in _CLAUSE_DEPS for t in path):
        return None
    if verb.lemma_ in _ALIAS_VERBS and len(path) <= 2 or verb.lemma_ == "bear":
        return None  # "known as X": another name of the subject, which the alias rules read
    if verb.lemma_ == "be" and root.dep_ == "attr":
        return None  # the copula's noun describes the subject ("was the Duchess of Lorraine"): a role
    subj, _passive = rules.subject(verb)
    if subj is None or subj == key or table.get(subj).type in {"DATE", "NUMBER"}:
        return None
    kept: set[int] = {verb.i}
    kept.update(c.i for c in verb.children if c.dep_ in _VERB_PARTS)
    on_path = {t.i for t in path}
    for obj in (c for c in verb.children if c.dep_ == "dobj" and c.i not in on_path):
        # the verb's object stays with it ("joins the Ose River near which village?"), its own phrases not
        kept.add(obj.i)
        kept.update(t.i for c in obj.children if c.dep_ in _MODIFIERS for t in c.subtree)
    for tok in path:
        kept.add(tok.i)
        for child in tok.children:
            if child.dep_ in _MODIFIERS and child.i not in kept:
                kept.update(t.i for t in child.subtree)
    kept.update(range(start, end))
    # words before the verb ("In 1902, X protested") follow it in the question ("X protested in 1902")
    after = sorted(i for i in kept if i >= verb.i or doc[i].dep_ in _VERB_PARTS and doc[i].head.i == verb.i)
    words = after + sorted(kept - set(after))
    if any(doc[i].pos_ == "ADP" and not any(c.i in kept for c in doc[i].children) for i in kept):
        return None  # a preposition whose object was left out ("released as a single from on ...")
    if any(doc[a].pos_ == doc[b].pos_ == "ADP" for a, b in zip(words, words[1:], strict=False)):
        return None  # "emigrated to in 1947": the parse lost a word between them
    if len(words) > _MAX_WORDS or any(
        doc[i].is_punct or doc[i].pos_ in {"PRON", "SYM", "X"} for i in words if not start <= i < end
    ):
        return None  # a paraphrase of the sentence, or a pronoun no question may hold ("his 1988 death")
    subj_rec = table.get(subj)
    answers = [key]  # "such as A, B and C": the list's later members answer the same question
    for member in coordinated(root)[1:]:
        other = table.key_at(member)
        if other and other not in linked and other != subj and other not in answers:
            answers.append(other)
    wh, dropped = _wh_phrase(etype, root, named_kind or counted)
    if not wh:
        return None
    dropped |= set(range(start + 1, end))
    # the replaced words' articles and owners go with them ("the UAE's ten matches": "how many matches")
    owners = [c for t in (root, *(doc[i] for i in dropped)) for c in t.children if c.dep_ in {"det", "poss"}]
    dropped |= {t.i for c in owners for t in c.subtree}
    with_wh = [wh if i == start else _word(doc[i], verb) for i in words if i not in dropped or i == start]
    with_name = [_word(doc[i], verb) for i in words]
    wh_subject = "Who" if subj_rec.type == "PERSON" else "What"
    questions = [
        Question(f"{subj_rec.name} {' '.join(with_wh)}?", [subj], answers),
        Question(f"{wh_subject} {' '.join(with_name)}?", [key], [subj]),
    ]
    vp = " ".join(_word(doc[i], verb) for i in words if i < start or i >= end)
    return Fact(subj, vp or verb.text, questions)


def _word(tok: Token, verb: Token) -> str:
    if tok.i == verb.i and not any(c.dep_ in {"aux", "auxpass"} for c in tok.children):
        if tok.tag_ == "VBG":  # "the river, joining the Krishna near X": "the river joins ..."
            return _finite(tok.lemma_, "VBZ")
        if tok.tag_ == "VBN" and tok.dep_ != "ROOT":  # "a house, known as X": "the house is known as X"
            return f"is {tok.text}"
    return tok.text if tok.pos_ == "PROPN" or tok.text.isupper() else tok.text.lower()


def _wh_phrase(etype: str, root: Token, with_head: bool) -> tuple[str, set[int]]:
    """The wh-phrase that stands for the name, and the tokens it replaces besides the name's own;
    ``with_head``: the name is the kind noun's or the counted noun's, which the phrase takes in."""
    head = root.head
    if with_head:
        # "near Alampur village": "near which village"; "into 4 districts": "into how many districts"
        if head.pos_ != "NOUN" or head.i < root.i:
            return "", set()
        word = "how many" if root.dep_ == "nummod" else "which"
        between = set(range(root.i + 1, head.i + 1))
        return f"{word} {' '.join(t.text for t in root.doc[root.i + 1 : head.i + 1])}", between
    if etype == "PERSON":
        return "whom", set()
    if etype == "DATE":
        return ("which year" if root.text.isdigit() else "what date"), set()
    if etype == "NUMBER":
        return "what amount", set()
    return f"which {_wh_noun(etype)}", set()  # "which place", "which organization", ...

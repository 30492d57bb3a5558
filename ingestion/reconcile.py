"""Entity reconciliation: the same real-world entity from two documents is one node.

Mentions meet on one node by normalised name, so "The Beatles", "the Beatles"
and "Beatles" are one entity in a namespace. Aliases carry across: an entity
extracted with alias "Bob Dylan" joins the existing "Bob Dylan" node if there
is one. Names still unknown after that are compared with existing entities by
embedding: a candidate above the threshold joins only if it is a spelling
variant (same type, same number of words, each word alike, no differing
numbers), so "Piotr Ilyich Tchaikovsky" joins "Pyotr Ilyich Tchaikovsky" while
"Kim Jong-un" never joins "Kim Jong-il" and "New York" never joins "New York
City". Per-document provenance stays on the MENTIONS edges, so deleting a
document never loses another's facts.

A name alone is not enough evidence when the types disagree or the name is a
bare surname:

* Every path (name, alias, embedding) checks the type: entities of clearly
  different kinds (:data:`TYPE_FAMILIES`: a person, an organisation, a place,
  a work, an event, a date or number) never merge, so the song "Iron Maiden"
  stays apart from the band. Generic or unknown types (THING, OTHER, NORP, ...)
  are compatible with anything, because extractors use them when unsure.
* A one-word alias ("Snow" for Hank Snow) joins mentions within its own
  document only; across documents it is too ambiguous (weather reports about
  snow are not about the singer). Multi-word aliases still join across
  documents.

Ids stay deterministic: a new node gets the id of its normalised name (as
before, so stored memory keeps its ids); when that id is already taken by a
node of another kind, the new node's id is the name plus its type family
(see :func:`entity_id`).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import NamedTuple

_LEADING_ARTICLE = re.compile(r"^(the|a|an)\s+")
_POSSESSIVE = re.compile(r"(?:'s|’s|')$")
_NON_WORD = re.compile(r"[^\w]+")
_NUMERAL = re.compile(r"^(\d+|[ivxlcdm]+)$")
# Types whose near-identical embeddings still mean different things (1991 vs 1992).
NEVER_MERGED_BY_EMBEDDING = frozenset({"DATE", "NUMBER"})

#: Type -> family. Entities whose families differ never merge; a type missing here (THING, OTHER,
#: MISC, NORP, LANGUAGE, PRODUCT, LAW, anything an LLM invents) is generic: compatible with all.
#: DATE and NUMBER share a family because NER labels a bare year either way.
TYPE_FAMILIES: dict[str, str] = {
    **dict.fromkeys(["PERSON", "PER", "PEOPLE", "HUMAN", "CHARACTER"], "PERSON"),
    **dict.fromkeys(["ORG", "ORGANIZATION", "ORGANISATION", "COMPANY", "BAND", "INSTITUTION"], "ORG"),
    **dict.fromkeys(["PLACE", "LOCATION", "LOC", "GPE", "FAC", "FACILITY", "CITY", "COUNTRY", "REGION"], "PLACE"),
    **dict.fromkeys(["WORK", "WORK_OF_ART", "SONG", "ALBUM", "FILM", "MOVIE", "BOOK", "NOVEL"], "WORK"),
    "EVENT": "EVENT",
    **dict.fromkeys(["DATE", "TIME", "YEAR", "NUMBER", "CARDINAL", "ORDINAL", "QUANTITY", "MONEY", "PERCENT"], "VALUE"),
}  # fmt: skip


class StoredEntity(NamedTuple):
    """An existing entity found for a normalised name: by its own name or by a name it was mentioned under."""

    key: str
    id: str
    types: Sequence[str]
    via: str  # "name" | "alias"


ExistingLookup = Callable[[list[str]], Iterable[StoredEntity]]
SimilarLookup = Callable[[Sequence[tuple[str, str, str]]], dict[str, str]]


def normalize_name(name: str) -> str:
    """Case-, accent-, article- and punctuation-insensitive key of a name."""
    text = unicodedata.normalize("NFKD", name)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).lower().strip()
    text = _POSSESSIVE.sub("", text)
    text = _LEADING_ARTICLE.sub("", text)
    return _NON_WORD.sub(" ", text).strip()


def type_family(type_: str | None) -> str | None:
    """The family of an entity type, or None for a generic type that is compatible with every other."""
    return TYPE_FAMILIES.get((type_ or "").strip().upper())


def types_compatible(a: str | None, b: str | None) -> bool:
    """Whether entities of these two types may be the same entity (the explicit family table decides)."""
    fa, fb = type_family(a), type_family(b)
    return fa is None or fb is None or fa == fb


def entity_id(normalized: str, family: str | None = None) -> str:
    """Stable global id of an entity key (short and safe to show in Browser).

    Without ``family`` the id of the name alone (every node had this id before types were checked);
    with it, the id of a further node of the same name and another kind ("iron maiden" + WORK).
    """
    text = normalized if family is None else f"{normalized}\x1f{family}"
    return "ent-" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def spelling_variants(a: str, b: str) -> bool:
    """Two names that differ only in spelling: same word count, every word alike, same numerals."""
    wa, wb = normalize_name(a).split(), normalize_name(b).split()
    if not wa or len(wa) != len(wb) or wa == wb:
        return bool(wa) and wa == wb
    for x, y in zip(wa, wb, strict=True):
        if x == y:
            continue
        if _NUMERAL.match(x) or _NUMERAL.match(y):
            return False
        if SequenceMatcher(None, x, y).ratio() < 0.6:
            return False
    return True


@dataclass(frozen=True)
class _Entry:
    """One way a normalised name leads to a node."""

    id: str
    via: str  # "name": the node's own name; "alias": a name it was mentioned under; "similar": embedding
    doc: str | None  # the document whose mention made the entry (None: stored memory)


class EntityResolver:
    """Maps entity mentions to global ids, consulting entities already in the graph."""

    def __init__(self, lookup_existing: ExistingLookup, lookup_similar: SimilarLookup | None = None) -> None:
        # lookup_existing: normalized names -> the stored entities they lead to (by name or alias)
        # lookup_similar: [(normalized, name, type)] -> {normalized: existing entity id}
        self._lookup_existing = lookup_existing
        self._lookup_similar = lookup_similar
        self._entries: dict[str, list[_Entry]] = {}
        self._families: dict[str, set[str]] = {}  # node id -> type families of its mentions
        self._fetched: set[str] = set()

    # ------------------------------------------------------------ priming
    def prime(self, keys: Iterable[str]) -> None:
        """Fetch the stored entities for a batch of keys in one lookup."""
        missing = sorted({k for k in keys if k and k not in self._fetched})
        if not missing:
            return
        found = sorted(self._lookup_existing(missing), key=lambda s: (s.key, s.via != "name", s.id))
        for stored in found:
            self._families.setdefault(stored.id, set()).update(f for f in map(type_family, stored.types) if f)
            self._add(stored.key, _Entry(stored.id, stored.via, None))
        self._fetched.update(missing)

    def prime_similar(self, entities: Iterable[tuple[str, str, Sequence[str], str | None]]) -> None:
        """Embedding candidates for (name, type, aliases, doc id) that neither name nor aliases resolved."""
        if self._lookup_similar is None:
            return
        todo: dict[str, tuple[str, str, str]] = {}
        for name, type_, aliases, doc_id in entities:
            key = normalize_name(name)
            if not key or key in todo or type_ in NEVER_MERGED_BY_EMBEDDING:
                continue
            if self._match(key, type_, _alias_keys(key, aliases), doc_id) is None:
                todo[key] = (key, name, type_)
        if not todo:
            return
        for key, node_id in self._lookup_similar(sorted(todo.values())).items():
            family = type_family(todo[key][2]) if key in todo else None
            self._families.setdefault(node_id, set()).update([family] if family else [])
            self._add(key, _Entry(node_id, "similar", None))

    def forget(self, entity_ids: Iterable[str]) -> None:
        """Drop cached entries of deleted entities (their names may now lead elsewhere: look them up again)."""
        gone = set(entity_ids)
        if not gone:
            return
        for key in [k for k, entries in self._entries.items() if any(e.id in gone for e in entries)]:
            kept = [e for e in self._entries[key] if e.id not in gone]
            if kept:
                self._entries[key] = kept
            else:
                del self._entries[key]
            self._fetched.discard(key)
        for node_id in gone:
            self._families.pop(node_id, None)

    def reset(self) -> None:
        """Forget everything cached (after a failed write the cache may name nodes that were never written)."""
        self._entries.clear()
        self._families.clear()
        self._fetched.clear()

    # ------------------------------------------------------------ resolving
    def resolve(
        self, name: str, aliases: Iterable[str] = (), type_: str = "THING", doc_id: str | None = None
    ) -> tuple[str, str]:
        """(global id, normalized name) for a mention: a compatible node its name or an alias leads to, else new."""
        key = normalize_name(name) or name.strip().lower()
        alias_keys = _alias_keys(key, aliases)
        node_id = self._match(key, type_, alias_keys, doc_id)
        if node_id is None:
            node_id = self._new_id(key, type_)
            self._add(key, _Entry(node_id, "name", doc_id))
        elif not any(e.id == node_id for e in self._entries.get(key, ())):
            self._add(key, _Entry(node_id, "alias", doc_id))  # later mentions under this name find the node
        family = type_family(type_)
        self._families.setdefault(node_id, set()).update([family] if family else [])
        for alias_key in alias_keys:  # later mentions under an alias join this node
            if not any(e.id == node_id for e in self._entries.get(alias_key, ())):
                self._add(alias_key, _Entry(node_id, "alias", doc_id))
        return node_id, key

    def _match(self, key: str, type_: str, alias_keys: Sequence[str], doc_id: str | None) -> str | None:
        """The node a mention joins: by its own name first, then by each of its aliases."""
        found = self._best(key, type_, doc_id, as_alias=False)
        for alias_key in alias_keys:
            if found is not None:
                break
            found = self._best(alias_key, type_, doc_id, as_alias=True)
        return found

    def _best(self, key: str, type_: str, doc_id: str | None, *, as_alias: bool) -> str | None:
        """The best compatible node for one key: same type family first, then own names before aliases."""
        family = type_family(type_)
        one_word = len(key.split()) == 1
        ranked: list[tuple[int, int, int, str]] = []
        for order, entry in enumerate(self._entries.get(key, ())):
            by_alias = as_alias or entry.via == "alias"
            if by_alias and one_word and (doc_id is None or entry.doc != doc_id):
                continue  # a bare one-word alias never joins across documents
            families = self._families.get(entry.id, set())
            if family is not None and families and family not in families:
                continue
            exact = family is not None and family in families
            ranked.append((0 if exact else 1, 1 if entry.via == "alias" else 0, order, entry.id))
        return min(ranked)[3] if ranked else None

    def _new_id(self, key: str, type_: str) -> str:
        """The name's own id unless a node of another kind holds it; then the name-and-family id."""
        taken = {e.id for e in self._entries.get(key, ())}
        plain = entity_id(key)
        if plain not in taken:
            return plain
        return entity_id(key, type_family(type_) or (type_ or "THING").upper())

    def _add(self, key: str, entry: _Entry) -> None:
        entries = self._entries.setdefault(key, [])
        if entry not in entries:
            entries.append(entry)


def _alias_keys(key: str, aliases: Iterable[str]) -> list[str]:
    """Normalised aliases of a mention, without its own name and duplicates, in the given order."""
    keys = (normalize_name(a) for a in aliases)
    return [k for k in dict.fromkeys(keys) if k and k != key]

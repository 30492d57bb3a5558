"""Entity reconciliation: the same real-world entity from two documents is one node.

An entity's global id comes from its normalised name, so "The Beatles",
"the Beatles" and "Beatles" meet on one node in a namespace. Aliases carry
across: an entity extracted with alias "Bob Dylan" joins the existing
"Bob Dylan" node if there is one. Names still unknown after that are compared
with existing entities by embedding: a candidate above the threshold joins only
if it is a spelling variant (same type, same number of words, each word alike,
no differing numbers), so "Piotr Ilyich Tchaikovsky" joins "Pyotr Ilyich
Tchaikovsky" while "Kim Jong-un" never joins "Kim Jong-il" and "New York"
never joins "New York City". Per-document provenance stays on the MENTIONS
edges, so deleting a document never loses another's facts.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from difflib import SequenceMatcher

_LEADING_ARTICLE = re.compile(r"^(the|a|an)\s+")
_POSSESSIVE = re.compile(r"(?:'s|’s|')$")
_NON_WORD = re.compile(r"[^\w]+")
_NUMERAL = re.compile(r"^(\d+|[ivxlcdm]+)$")
# Types whose near-identical embeddings still mean different things (1991 vs 1992).
NEVER_MERGED_BY_EMBEDDING = frozenset({"DATE", "NUMBER"})
SimilarLookup = Callable[[Sequence[tuple[str, str, str]]], dict[str, str]]


def normalize_name(name: str) -> str:
    """Case-, accent-, article- and punctuation-insensitive key of a name."""
    text = unicodedata.normalize("NFKD", name)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).lower().strip()
    text = _POSSESSIVE.sub("", text)
    text = _LEADING_ARTICLE.sub("", text)
    return _NON_WORD.sub(" ", text).strip()


def entity_id(normalized: str) -> str:
    """Stable global id of an entity key (short and safe to show in Browser)."""
    return "ent-" + hashlib.sha1(normalized.encode("utf-8")).hexdigest()[:16]


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


class EntityResolver:
    """Maps entity names to global ids, consulting entities already in the graph."""

    def __init__(self, lookup_existing: Callable[[list[str]], dict[str, str]],
                 lookup_similar: SimilarLookup | None = None) -> None:  # fmt: skip
        # lookup_existing: normalized names -> {normalized: existing entity id}
        # lookup_similar: [(normalized, name, type)] -> {normalized: existing entity id}
        self._lookup_existing = lookup_existing
        self._lookup_similar = lookup_similar
        self._known: dict[str, str] = {}

    def prime(self, keys: Iterable[str]) -> None:
        """Fetch existing ids for a batch of keys in one query."""
        missing = sorted({k for k in keys if k and k not in self._known})
        if missing:
            self._known.update(self._lookup_existing(missing))

    def prime_similar(self, entities: Iterable[tuple[str, str, Sequence[str]]]) -> None:
        """Embedding candidates for (name, type, aliases) that neither name nor aliases resolved."""
        if self._lookup_similar is None:
            return
        todo: dict[str, tuple[str, str, str]] = {}
        for name, type_, aliases in entities:
            key = normalize_name(name)
            if not key or key in self._known or type_ in NEVER_MERGED_BY_EMBEDDING:
                continue
            if any(normalize_name(a) in self._known for a in aliases):
                continue
            todo.setdefault(key, (key, name, type_))
        if todo:
            self._known.update(self._lookup_similar(sorted(todo.values())))

    def forget(self, entity_ids: Iterable[str]) -> None:
        """Drop cached keys of deleted entities (an alias may now point elsewhere)."""
        gone = set(entity_ids)
        if gone:
            self._known = {k: v for k, v in self._known.items() if v not in gone}

    def resolve(self, name: str, aliases: Iterable[str] = ()) -> tuple[str, str]:
        """(global id, normalized name) for an entity: its own key, else an alias's existing node."""
        key = normalize_name(name) or name.strip().lower()
        if key in self._known:
            return self._known[key], key
        for alias in aliases:
            alias_key = normalize_name(alias)
            if alias_key and alias_key in self._known:
                self._known[key] = self._known[alias_key]
                return self._known[key], key
        new_id = entity_id(key)
        self._known[key] = new_id
        for alias in aliases:  # later mentions under the alias join this node
            alias_key = normalize_name(alias)
            if alias_key:
                self._known.setdefault(alias_key, new_id)
        return new_id, key

"""Entity reconciliation: the same real-world entity from two documents is one node.

An entity's global id comes from its normalised name, so "The Beatles",
"the Beatles" and "Beatles" meet on one node in a namespace. Aliases carry
across: an entity extracted with alias "Bob Dylan" joins the existing
"Bob Dylan" node if there is one. Per-document provenance stays on the
MENTIONS edges, so deleting a document never loses another's facts.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Iterable

_LEADING_ARTICLE = re.compile(r"^(the|a|an)\s+")
_POSSESSIVE = re.compile(r"(?:'s|’s|')$")
_NON_WORD = re.compile(r"[^\w]+")


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


class EntityResolver:
    """Maps entity names to global ids, consulting entities already in the graph."""

    def __init__(self, lookup_existing: Callable[[list[str]], dict[str, str]]) -> None:
        # lookup_existing: normalized names -> {normalized: existing entity id}
        self._lookup_existing = lookup_existing
        self._known: dict[str, str] = {}

    def prime(self, keys: Iterable[str]) -> None:
        """Fetch existing ids for a batch of keys in one query."""
        missing = sorted({k for k in keys if k and k not in self._known})
        if missing:
            self._known.update(self._lookup_existing(missing))

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

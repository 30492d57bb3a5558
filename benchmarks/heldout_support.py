"""What the held-out question set builders share: the 2Wiki passages, the patterns that read a
person's dates and nationality (and a film's director) off a passage, the list of supporting
passages a set uses, and writing ``questions.json`` + ``corpus.json``."""

from __future__ import annotations

import argparse
import json
import random
import re
from collections.abc import Sequence
from pathlib import Path

from bench_support import SHARED

from engramdb.ingestion.extraction.rules_lexicon import country_of_demonym

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"

#: "X is a 1955 Danish drama film directed by Y"
FILM = re.compile(
    r"^(?P<name>[^(]+?)\s*(?:\([^)]*\)\s*)?is an? (?P<year>1[89]\d\d|20[0-2]\d) (?P<desc>[^.]*?)film directed by "
    r"(?P<director>[A-Z][\w.'-]+(?: [A-Z][\w.'-]+){0,3})"
)
#: "Y (15 November 1911 – 17 May 2003) was a Norwegian actress": the birth date and the nationality word.
PERSON = re.compile(
    r"^[^(]*\((?:born )?(?P<born>(?:\d{1,2} )?(?:[A-Z][a-z]+ )?(?:\d{1,2}, )?\d{4})\s*(?:[–-][^)]*)?\)\s*"
    r"(?:is|was) an? (?P<nat>[A-Z][a-z]+)"
)
_MONTH = r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
#: "24 March 1502", "March 24, 1502", "March 1502", "1502"
DATE = rf"(?:\d{{1,2}} {_MONTH} \d{{3,4}}|{_MONTH} \d{{1,2}}, \d{{3,4}}|{_MONTH} \d{{3,4}}|\d{{3,4}})"
_OPENING_PAREN = re.compile(r"^[^(.]{2,90}?\(\s*(?P<body>[^()]*)\)")
_UNSURE = re.compile(r"\bc\.|\?|\bor\b|/|circa|before|after|\bfl\.|\bBC\b|\bAD\b|\bBCE\b|\bCE\b|reign")
_BORN = re.compile(rf"(?:born|b\.)\s*(?P<born>{DATE})")
_DIED = re.compile(rf"(?:died|d\.)\s*(?P<died>{DATE})")
_SPAN = re.compile(rf"(?P<born>{DATE})\s*[–-]\s*(?P<died>{DATE})")
#: the first sentence's "... was an English nobleman" (the word is checked against the demonyms by the caller)
_NATIONALITY = re.compile(
    r"\b(?:is|was) (?:an?|the) (?:(?:former|retired|late|noted|famous|prominent)\s+)?(?P<nat>[A-Z][a-z]+)\b"
)


def arguments(doc: str, name: str, seed: int) -> argparse.Namespace:
    """The options every held-out set takes: output folder (``results/<name>``), distractors, seed."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=RESULTS / name)
    parser.add_argument("--distractors", type=int, default=300)
    parser.add_argument("--seed", type=int, default=seed)
    parser.add_argument(
        "--exclude", type=Path, action="append", default=[], metavar="QUESTIONS_JSON",
        help="Leave out every question this earlier set holds (repeatable): with another --seed, a "
        "fresh set whose questions no earlier result has seen.",
    )  # fmt: skip
    return parser.parse_args()


def load_corpus() -> list[dict]:
    """The 2Wiki passages, ``{title, text}``."""
    return json.loads((SHARED / "data" / "2wiki" / "corpus.json").read_text())


def year_of(date: str) -> int:
    return int(re.search(r"\d{3,4}", date).group(0))  # type: ignore[union-attr]


def life_dates(text: str) -> tuple[str | None, str | None]:
    """Birth and death dates as written in the passage's opening parenthesis ("Y( 24 March 1502 – 26
    November 1558) was ..."), None where absent or hedged (c., ?, or, BC ...)."""
    m = _OPENING_PAREN.match(text)
    if m is None:
        return None, None
    body = m.group("body").split(";")[-1].strip()
    if _UNSURE.search(body):
        return None, None
    for pattern in (_SPAN, _BORN, _DIED):
        if (d := pattern.fullmatch(body)) is not None:
            found = d.groupdict()
            return found.get("born"), found.get("died")
    return None, None


def nationality_word(text: str) -> str | None:
    """The capitalised word after "is/was a(n)" in the first sentence, e.g. "English"."""
    first = re.split(r"(?<=[a-z)])\. ", text, maxsplit=1)[0]
    m = _NATIONALITY.search(first)
    return m.group("nat") if m else None


def film_pool(corpus: list[dict]) -> tuple[list[dict], dict[str, dict]]:
    """The film passages whose director has a passage with a birth date and a nationality, in corpus
    order, and those directors by name."""
    by_title = {p["title"]: p for p in corpus}
    directors: dict[str, dict] = {}
    films = []
    for p in corpus:
        m = FILM.match(p["text"])
        if m is None or m.group("director") not in by_title:
            continue
        if re.search(r"\bor\b|,", m.group("name")):  # a title that reads as two options
            continue
        person = PERSON.match(by_title[m.group("director")]["text"])
        if person is None or country_of_demonym(person.group("nat")) is None:
            continue
        directors[m.group("director")] = {
            "name": m.group("director"), "born": person.group("born"), "nat": person.group("nat"),
            "passage": by_title[m.group("director")],
        }  # fmt: skip
        films.append({"name": m.group("name").strip(), "year": int(m.group("year")),
                      "director": m.group("director"), "passage": p})  # fmt: skip
    return films, directors


class Support:
    """The supporting passages of a set, in first-use order; calling it gives an item's paragraphs."""

    def __init__(self) -> None:
        self.used: dict[str, dict] = {}

    def __call__(self, *passages: dict) -> list[dict]:
        for p in passages:
            self.used[p["title"]] = p
        return [{"title": p["title"], "paragraph_text": p["text"], "is_supporting": True} for p in passages]


def leave_out(items: list[dict], exclude: Sequence[Path]) -> list[dict]:
    """``items`` without the questions any ``exclude`` file (an earlier set's questions.json) holds, so
    a set drawn with another seed is fresh; the left-out questions' passages still go into the corpus
    (``support`` keeps them), as distractors."""
    seen = {q["question"] for path in exclude for q in json.loads(path.read_text())}
    if not seen:
        return items
    kept = [i for i in items if i["question"] not in seen]
    print(f"left out {len(items) - len(kept)} questions earlier sets hold")
    return kept


def write_set(
    out: Path, items: list[dict], support: Support, corpus: list[dict], distractors: int, rng: random.Random
) -> list[dict]:
    """Write ``questions.json`` and ``corpus.json`` (the supporting passages, then ``distractors`` seeded
    random others) to ``out``; returns the corpus passages."""
    others = [p for p in corpus if p["title"] not in support.used]
    rng.shuffle(others)
    passages = [
        {"title": p["title"], "text": p["text"]} for p in [*support.used.values(), *others[:distractors]]
    ]
    out.mkdir(parents=True, exist_ok=True)
    (out / "questions.json").write_text(json.dumps(items, indent=1, ensure_ascii=False))
    (out / "corpus.json").write_text(json.dumps(passages, indent=1, ensure_ascii=False))
    answerable = sum(i.get("answerable", True) for i in items)
    print(f"{len(items)} questions ({answerable} answerable), {len(passages)} passages -> {out}")
    return passages

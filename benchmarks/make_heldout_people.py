"""Build a second held-out-style question set, about people and their relatives, from 2Wiki passages
(never from the MuSiQue dev questions).

    python benchmarks/make_heldout_people.py [--out benchmarks/results/heldout-people] [--distractors 300]
    engramdb -n heldout-people eval benchmarks/results/heldout-people/questions.json \\
        --corpus benchmarks/results/heldout-people/corpus.json --decomposition offline -s chain -s dense -s bm25

Each bridge question names a person X whose passage points to a relative Y who has a passage of
their own ("He was the second son of Y, 3rd Duke of ...", "She was married to Y"); the answer is
read off Y's passage ("Y (24 March 1502 – 26 November 1558) was an English nobleman"), so both hops
are needed. To drop namesakes, a link is kept only if the two passages' dates agree (a parent born
14-70 years before the child, spouses of an age) or, with no dates to compare, if the relative's name
is a long one ("Arnulf II, Count of Boulogne", not "Orhan"); a second hop's fact (the year, the
nationality word, the grandfather's name) must not already be in X's passage.

* bridge: "When did the father/mother of X die?", "What nationality was the father/mother of X?",
  "Who was the paternal grandfather of X?" (X -> father -> his father), "When was the spouse of X born?";
* comparison, over people no bridge question uses: "Who died first, X or Z?",
  "Which of X and Z was born later?";
* unanswerable: the bridge shapes about invented people no passage mentions (``answerable: false``).

Gold answers are spans of a supporting passage; dates also accept the year alone, nationalities the
country. No passage of the film set (make_heldout_2wiki.py's films and their directors) is used.
The corpus is every supporting passage plus seeded random distractors. Deterministic for a given seed;
the shapes are fixed here, not fitted to any result.
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict

from heldout_support import (
    Support,
    arguments,
    film_pool,
    leave_out,
    life_dates,
    load_corpus,
    nationality_word,
    write_set,
    year_of,
)

from engramdb.ingestion.extraction.rules_lexicon import country_of_demonym

INVENTED_PEOPLE = ["Osric Vellandrath", "Maribel Quintascor", "Tobrin Haskevane",
                   "Ysolde Branmarrow", "Cassian Emberlidge", "Lidwina Okonsteth"]  # fmt: skip
BRIDGES = {
    "grandfather": "Who was the paternal grandfather of {x}?",
    "died": "When did the {kin} of {x} die?",
    "nat": "What nationality was the {kin} of {x}?",
    "spouse": "When was the spouse of {x} born?",
}
COMPARISONS = {
    "died-first": "Who died first, {x} or {z}?",
    "born-later": "Which of {x} and {z} was born later?",
}
COUNTS = {"grandfather": 8, "died": 9, "nat": 8, "spouse": 7, "died-first": 6, "born-later": 5}
_TITLES = (
    r"(?:the|his|her|King|Queen|Emperor|Empress|Prince|Princess|Duke|Duchess|Count|Countess|Sultan|Lord|"
    r"Lady|Grand|Archduke|Archduchess|Infante|Infanta|Tsar|Earl|Baron|Margrave|[a-z]+)\s+"
)
#: "He was the second son of ", "She is the eldest daughter of King ", "X (1425 – 1492), son of "
_PARENT = re.compile(rf"\b(?:son|daughter|child)(?: and heir)? of (?:{_TITLES}){{0,3}}?")
#: "She was married to the writer ", "He married ", "was the wife of "
_SPOUSE = re.compile(rf"\b(?:(?:wife|husband|widow) of|married(?: to)?) (?:{_TITLES}){{0,3}}?")
#: another relative named earlier in the sentence: the phrase may be about them, not the passage's person
_EARLIER = {
    _PARENT: re.compile(
        r"\b(?:married|wife|husband|widow|brother|sister|father|mother|nephew|niece|cousin)\b"
    ),
    _SPOUSE: re.compile(
        r"\b(?:married|wife|husband|widow|son|daughter|child|brother|sister|father|mother)\b"
    ),
}
_SENTENCE_END = re.compile(r"(?<!\b\w)\.\s+(?=[A-Z\"])")
_NAME_GOES_ON = re.compile(r"^(?:\s+(?:of|de|von|van|la|le|du|der|da|di|y|the)\b|\s+[A-Z]|-|,\s+[A-Z])")
_PAREN_AFTER = re.compile(r"^\s*\(([^)]*)\)")


def base(title: str) -> str:
    """The title without its disambiguation: "Olof Palme (historian)" -> "Olof Palme"."""
    return re.sub(r"\s*\([^)]*\)$", "", title).strip()


def gender(name: str, text: str) -> str | None:
    """'m' or 'f' from a title in the name (Duke, Queen, ...), else when the passage's pronouns clearly
    say which."""
    if re.search(
        r"\b(?:King|Duke|Count|Earl|Prince|Emperor|Baron|Lord|Sir|Margrave|Landgrave|Archduke)\b", name
    ):
        return "m"
    if re.search(r"\b(?:Queen|Duchess|Countess|Princess|Empress|Baroness|Lady|Archduchess|Infanta)\b", name):
        return "f"
    he = len(re.findall(r"\b(?:he|his|him)\b", text, re.I))
    she = len(re.findall(r"\b(?:she|her|hers)\b", text, re.I))
    return "m" if he >= 2 and he >= 3 * she else "f" if she >= 2 and she >= 3 * he else None


def year(date: str | None) -> int | None:
    return year_of(date) if date else None


class People:
    """The passages with a unique name (title without disambiguation), what they say of the person
    (dates, nationality, pronouns), and the relatives they name."""

    def __init__(self, corpus: list[dict], exclude: set[str]) -> None:
        by_name = defaultdict(list)
        for p in corpus:
            by_name[base(p["title"])].append(p)
        self.info: dict[str, dict] = {}
        for name, ps in by_name.items():
            if len(ps) > 1 or ps[0]["title"] in exclude:
                continue
            text = ps[0]["text"]
            born, died = life_dates(text)
            nat = nationality_word(text)
            self.info[name] = {
                "name": name, "passage": ps[0], "born": born, "died": died, "gender": gender(name, text),
                "nat": nat if nat and country_of_demonym(nat) else None,
            }  # fmt: skip
        names = sorted((n for n in self.info if len(n) >= 5 and n[0].isupper()), key=len, reverse=True)
        self._name_at = re.compile("|".join(re.escape(n) for n in names))

    def relatives(self, name: str, relation: re.Pattern) -> list[str]:
        """The people ``name``'s passage relates to them by ``relation`` ("son of Y"), said of the
        passage's person: in the first sentence, or in one opening "He/She/<name> ... was/is/married"."""
        text = self.info[name]["passage"]["text"]
        found = []
        for m in relation.finditer(text):
            ends = [e.end() for e in _SENTENCE_END.finditer(text, 0, m.start())]
            sentence = text[ends[-1] if ends else 0 : m.start()]
            subject = rf"(?:He|She|{re.escape(name.split()[0])})\S*\s+(?:[A-Z]\S*\s+)?(?:was|is|married)\b"
            if (ends and not re.match(subject, sentence)) or _EARLIER[relation].search(sentence):
                continue
            hit = self._name_at.match(text, m.end())
            if hit is None or hit.group(0) == name or _NAME_GOES_ON.match(text[hit.end() :]):
                continue
            paren = _PAREN_AFTER.match(text[hit.end() :])
            other = self.info[hit.group(0)]["passage"]["text"]
            if paren and not all(y in other for y in re.findall(r"\d{3,4}", paren.group(1))):
                continue  # this passage gives the relative other dates than theirs: a namesake
            found.append(hit.group(0))
        return found

    def fits(self, person: str, relative: str, parent: bool) -> bool:
        """Whether the two passages' dates fit ``relative`` being a parent (else a spouse) of ``person``;
        with no pair of dates to check, whether the relative's name is long enough not to be a namesake's."""
        a, b = self.info[person], self.info[relative]
        ab, ad, bb, bd = year(a["born"]), year(a["died"]), year(b["born"]), year(b["died"])
        checks = []
        if ab and bb:
            checks.append(14 <= ab - bb <= 70 if parent else abs(ab - bb) <= 35)
        if ab and bd:
            checks.append(bd >= ab - 1 if parent else bd >= ab + 12)
        if ad and bb:
            checks.append(ad - bb >= 14 if parent else ad >= bb + 12)
        if not checks:
            return len(relative.split()) >= 3
        return all(checks)

    def parent(self, name: str) -> str | None:
        """The first parent ``name``'s passage names, when the dates fit and the pronouns give a gender."""
        for y in self.relatives(name, _PARENT)[:1]:
            if self.fits(name, y, parent=True) and self.info[y]["gender"]:
                return y
        return None

    def spouse(self, name: str) -> str | None:
        for y in self.relatives(name, _SPOUSE)[:1]:
            if self.fits(name, y, parent=False):
                return y
        return None


def main() -> None:
    args = arguments(__doc__, "heldout-people", seed=29)
    rng = random.Random(args.seed)
    corpus = load_corpus()
    films, directors = film_pool(corpus)
    film_set = {f["passage"]["title"] for f in films} | {d["passage"]["title"] for d in directors.values()}
    people = People(corpus, exclude=film_set)
    info = people.info
    names = sorted(info)
    rng.shuffle(names)
    support = Support()
    items: list[dict] = []
    taken: set[str] = set()  # the people the bridge questions name or pass through

    def add(shape: str, answer: str, aliases: list[str], path: tuple[str, ...], **slots: str) -> None:
        taken.update(path)
        question = (BRIDGES | COMPARISONS)[shape].format(x=path[0], **slots)
        item = {"id": f"{shape}-{len(items)}", "question": question, "answer": answer}
        if aliases := [a for a in dict.fromkeys(aliases) if a and a != answer]:
            item["answer_aliases"] = aliases
        item["paragraphs"] = support(*(info[n]["passage"] for n in path))
        items.append(item)

    def free(*path: str) -> bool:
        return not taken.intersection(path)

    def kin(y: str) -> str:
        return "father" if info[y]["gender"] == "m" else "mother"

    made: Counter[str] = Counter()
    for x in names:  # one parent question per person, the grandfather one first when the chain allows it
        if (y := people.parent(x)) is None or not free(x, y):
            continue
        x_text, died, nat = info[x]["passage"]["text"], info[y]["died"], info[y]["nat"]
        z = people.parent(y)
        if (
            made["grandfather"] < COUNTS["grandfather"]
            and z
            and free(z)
            and z not in x_text
            and kin(y) == kin(z) == "father"
        ):
            made["grandfather"] += 1
            add("grandfather", z, [info[z]["passage"]["title"]], (x, y, z))
        elif made["died"] < COUNTS["died"] and died and str(year_of(died)) not in x_text:
            made["died"] += 1
            add("died", died, [str(year_of(died))], (x, y), kin=kin(y))
        elif made["nat"] < COUNTS["nat"] and nat and nat not in x_text:
            made["nat"] += 1
            add("nat", nat, [country_of_demonym(nat) or ""], (x, y), kin=kin(y))
    for x in names:
        y = people.spouse(x)
        if made["spouse"] < COUNTS["spouse"] and y and free(x, y) and (born := info[y]["born"]):
            if str(year_of(born)) not in info[x]["passage"]["text"]:
                made["spouse"] += 1
                add("spouse", born, [str(year_of(born))], (x, y))

    # comparisons, over people no bridge question touches, with both dates and their name as written
    pool = [
        n for n in names
        if free(n) and n not in support.used and info[n]["born"] and info[n]["died"]
        and n in info[n]["passage"]["text"] and not re.search(r",|\bor\b|\band\b", n)
    ]  # fmt: skip

    def when(n: str, key: str) -> int:
        return year_of(info[n][key])

    died_pairs = [
        (a, b) for a, b in zip(pool[0:24:2], pool[1:24:2], strict=False) if when(a, "died") != when(b, "died")
    ]
    for a, b in died_pairs[: COUNTS["died-first"]]:
        add("died-first", min(a, b, key=lambda n: when(n, "died")), [], (a, b), z=b)
    born_pairs = [
        (a, b)
        for a, b in zip(pool[24:44:2], pool[25:44:2], strict=False)
        if when(a, "born") != when(b, "born")
    ]
    for a, b in born_pairs[: COUNTS["born-later"]]:
        add("born-later", max(a, b, key=lambda n: when(n, "born")), [], (a, b), z=b)

    for name in INVENTED_PEOPLE:
        question = rng.choice(list(BRIDGES.values())).format(x=name, kin="father")
        items.append({"id": f"absent-{len(items)}", "question": question, "answerable": False})
    items = leave_out(items, args.exclude)
    passages = write_set(args.out, items, support, corpus, args.distractors, rng)
    check(items, corpus, passages, film_set)


def check(items: list[dict], corpus: list[dict], passages: list[dict], film_set: set[str]) -> None:
    """Fail loudly on a gold answer missing from its supporting passages, a question copied from a
    passage, an invented name some passage holds, or a film-set passage among the supports; print the
    counts per shape."""
    texts = [p["text"].lower() for p in corpus]
    problems = []
    for item in items:
        question = item["question"].rstrip("?").lower()
        if any(question in t for t in texts):
            problems.append(f"{item['id']}: the question text is in a passage")
        if item.get("answerable", True):
            if not any(item["answer"] in p["paragraph_text"] for p in item["paragraphs"]):
                problems.append(f"{item['id']}: {item['answer']!r} is in no supporting paragraph")
            if film_set.intersection(p["title"] for p in item["paragraphs"]):
                problems.append(f"{item['id']}: supported by a passage of the film set")
    for name in INVENTED_PEOPLE:
        for part in (name, *name.split()):
            if any(re.search(rf"\b{re.escape(part.lower())}\b", t) for t in texts):
                problems.append(f"invented name part {part!r} is in a passage")
    if problems:
        raise SystemExit("\n".join(problems))
    shapes = Counter(i["id"].rsplit("-", 1)[0] for i in items)
    print("per shape: " + ", ".join(f"{shape} {n}" for shape, n in shapes.items()))
    print(
        f"checked: each gold answer is in a supporting paragraph, no question is in any of the {len(texts)} "
        f"passages, no invented name either; the corpus has {len(passages)} passages"
    )


if __name__ == "__main__":
    main()

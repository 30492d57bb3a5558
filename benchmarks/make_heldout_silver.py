"""Build a third question set of our own: two-hop bridges composed from a real model's QA pairs.

    python benchmarks/make_heldout_silver.py [--out benchmarks/results/heldout-silver] [--count 40]
                                             [--per-bridge 1] [--per-passage 2]
    engramdb -n musique eval benchmarks/results/heldout-silver/questions.json \\
        --corpus ../shared/data/musique/corpus.json --budgets 128,256,512

The wide form of the set, ``benchmarks/results/heldout-silver-wide`` (126 questions, 120
answerable), lets a bridge entity carry up to five questions and a passage up to eight:

    python benchmarks/make_heldout_silver.py --out benchmarks/results/heldout-silver-wide \\
        --count 1000 --per-bridge 5 --per-passage 8

Its questions share passages more, but with three times as many of them a difference of one or
two questions between two strategies stops deciding a comparison; the 156 passages hold no more
bridges under the default caps.

Why a third set: the two 2Wiki sets ask templated questions (directors, parents,
birth dates) whose shapes the offline extractor handles well, so they say little
about questions phrased the way people and other datasets phrase them. This set
takes its questions from somewhere else: the QA pairs a real model wrote for 156
MuSiQue passages (``../shared/data/llm-recordings/gsw-extract-v2``). None of it
comes from the MuSiQue dev questions or their answers.

A bridge joins two of the model's QA pairs from different passages: the first
one's single answer Y (a named person, organisation, place or work) is the only
entity the second one's question names. The first question becomes a noun phrase
by fixed patterns ("Who is the founder of X?" -> "the founder of X", "Which
saxophonist made X?" -> "the saxophonist who made X") and replaces Y's name in the
second: "When was Sonny Stitt born?" -> "When was the saxophonist who made the album
Night Crawler born?". The answer is the second pair's answer, kept only when the
passage writes it word for word. The gold decomposition is the two pairs (``#1``
for Y), in MuSiQue's form, so chain search is run with it as on MuSiQue dev.
Unanswerable items ask the same composed questions about invented names.

The corpus is MuSiQue's own (1,890 passages), so the memory eval builds for MuSiQue
dev serves this set too. Deterministic for a given seed; patterns fixed here, not
fitted to any result.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter
from pathlib import Path

from bench_support import SHARED
from heldout_support import RESULTS
from silver_support import Recording, load_recordings

RECORDINGS = SHARED / "data" / "llm-recordings" / "gsw-extract-v2"
BRIDGE_TYPES = frozenset({"PERSON", "ORG", "PLACE", "WORK"})
INVENTED = ["Velmora Tessing", "the Ulgarin Quarterly", "Oskavel Brandt", "Marrowdeep Abbey",
            "The Glass Ferryman", "Korrin Vaszely"]  # fmt: skip
#: "Who is/was the founder of X?" -> "the founder of X"
_ROLE = re.compile(r"^(?:Who|What) (?:is|was|were|are) (?P<np>the [^?]+? (?:of|for|in|at|by) [^?]+)\?$")
_IRREGULAR_PAST = {"make": "made", "write": "wrote", "win": "won", "lose": "lost", "lead": "led", "take": "took",
                   "give": "gave", "build": "built", "found": "founded", "run": "ran", "sing": "sang",
                   "become": "became", "leave": "left", "hold": "held", "buy": "bought", "sell": "sold",
                   "begin": "began", "join": "joined", "see": "saw", "meet": "met", "spend": "spent"}  # fmt: skip
_PAST = "(?:[a-z]+ed|" + "|".join(sorted(set(_IRREGULAR_PAST.values()))) + ")"
#: "Which saxophonist made the album X?" -> "the saxophonist who made the album X"
_AUX = r"(?!(?:is|was|are|were|did|does|do|has|had|have)\b)"
_WHICH = re.compile(
    rf"^(?:Which|What) (?P<noun>{_AUX}[a-z]+(?: {_AUX}[a-z]+)?) (?P<verb>{_PAST}) (?P<rest>[^?]+)\?$"
)
#: "Who founded X?" -> "the person who founded X"
_WHO = re.compile(rf"^Who (?P<verb>{_PAST}) (?P<rest>[^?]+)\?$")
_PEOPLE_WORDS = frozenset({"person", "man", "woman", "singer", "actor", "actress", "writer", "player"})
_PARTICIPLE = re.compile(rf"^(?:{_PAST}|born|located|known|situated|written|held)\b")


def past(verb: str, aux: str) -> str | None:
    """``verb`` after "did" in the past tense, after "does" in the third person; None if unsure."""
    if aux == "did":
        if verb in _IRREGULAR_PAST:
            return _IRREGULAR_PAST[verb]
        if not re.fullmatch(r"[a-z]+", verb) or verb.endswith("y"):
            return None
        return verb + ("d" if verb.endswith("e") else "ed")
    return verb + ("es" if re.search(r"(?:s|sh|ch|x|o)$", verb) else "s")


def noun_phrase(question: str, answer_type: str, named: list[str]) -> str | None:
    """The first question as a description of its answer (``named``: the entities it names), or
    None when no pattern fits."""
    if m := _ROLE.match(question):
        return m.group("np")
    if m := _WHICH.match(question):
        noun = m.group("noun")
        relative = "who" if answer_type == "PERSON" or noun.split()[-1] in _PEOPLE_WORDS else "that"
        return f"the {noun} {relative} {m.group('verb')} {m.group('rest')}"
    if (m := _WHO.match(question)) and answer_type == "PERSON":
        return f"the person who {m.group('verb')} {m.group('rest')}"
    for x in sorted(named, key=len, reverse=True):
        x_ = re.escape(x)
        head = rf"^(?:(?P<prep>In|Of|To|For|From|On|At|Into|With|By) which|Which|What) (?P<noun>{_AUX}[a-z]+(?: {_AUX}[a-z]+)?)"
        relative = "that"
        if m := re.match(rf"{head} (?P<aux>is|was|are|were) (?P<x>{x_})(?P<rest>[^?]*)\?$", question):
            rest = m.group("rest").strip()
            if m.group("prep") is not None:
                relative = f"{m.group('prep').lower()} which"
            if not rest or _PARTICIPLE.match(rest) or m.group("prep") is None:
                clause = " ".join(p for p in (x, m.group("aux"), rest) if p)
            else:
                clause = f"{x} {m.group('aux')} {rest}"
            return f"the {m.group('noun')} {relative} {clause}"
        if m := re.match(
            rf"{head} (?P<aux>did|does) (?P<x>{x_}) (?P<verb>[a-z]+)(?P<rest>[^?]*)\?$", question
        ):
            verb = past(m.group("verb"), m.group("aux"))
            if verb is None:
                return None
            if m.group("prep") is not None:
                relative = f"{m.group('prep').lower()} which"
            return f"the {m.group('noun')} {relative} {x} {verb}{m.group('rest')}"
    return None


def bridges(recordings: list[Recording], texts: dict[str, str]) -> list[dict]:
    """Every composable bridge (see the module docstring), in a fixed order."""
    asked: dict[str, list[tuple[Recording, object]]] = {}
    for rec in recordings:
        names = {e.id: e for e in rec.gsw.entities}
        for qa in rec.gsw.qa_pairs:
            for i in qa.question_entity_ids:
                asked.setdefault(names[i].name.lower(), []).append((rec, qa))
    out = []
    for rec in recordings:
        names = {e.id: e for e in rec.gsw.entities}
        for qa in rec.gsw.qa_pairs:
            if len(qa.answer_entity_ids) != 1:
                continue
            y = names[qa.answer_entity_ids[0]]
            if y.type not in BRIDGE_TYPES or not y.name[:1].isupper() or y.name not in texts[rec.title]:
                continue
            x = [names[i].name for i in qa.question_entity_ids]
            phrase = noun_phrase(qa.question, y.type, x)
            if phrase is None or y.name in phrase:
                continue
            for rec2, qa2 in asked.get(y.name.lower(), []):
                names2 = {e.id: e for e in rec2.gsw.entities}
                if rec2.title == rec.title or len(qa2.answer_entity_ids) != 1 or y.name not in qa2.question:
                    continue
                z = names2[qa2.answer_entity_ids[0]].name
                if z.lower() == y.name.lower() or z not in texts[rec2.title] or z in phrase:
                    continue
                question = re.sub(
                    rf"\b(?:[Tt]he )?{re.escape(y.name)}",
                    phrase.replace("\\", r"\\"),
                    qa2.question,
                    count=1,
                )
                if " ," in question or re.search(r"\b(\w+) \1\b", question):
                    continue
                out.append({
                    "question": question, "single": len(qa2.question_entity_ids) == 1, "answer": z, "bridge": y.name,
                    "named": x, "hop1": qa.question, "hop2": qa2.question.replace(y.name, "#1", 1),
                    "titles": (rec.title, rec2.title),
                })  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "heldout-silver")
    parser.add_argument("--count", type=int, default=40, help="answerable questions")
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--per-bridge", type=int, default=1, help="most questions through one bridge entity")
    parser.add_argument("--per-passage", type=int, default=2, help="most questions using one passage")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    corpus = json.loads((SHARED / "data" / "musique" / "corpus.json").read_text())
    texts = {p["title"]: p["text"] for p in corpus}
    recordings = [r for r in load_recordings(RECORDINGS) if r.title in texts]
    found = bridges(recordings, texts)
    rng.shuffle(found)
    found.sort(key=lambda b: not b["single"])  # a second hop naming only the bridge first: cleaner questions
    items: list[dict] = []
    chosen: list[dict] = []
    used_bridges: Counter[str] = Counter()
    used_passages: Counter[str] = Counter()
    asked: set[str] = set()
    for b in found:  # by default one question per bridge entity, a passage in at most two questions
        if len(items) == args.count:
            break
        if (
            used_bridges[b["bridge"]] >= args.per_bridge
            or any(used_passages[t] >= args.per_passage for t in b["titles"])
            or b["question"] in asked
        ):
            continue
        used_bridges[b["bridge"]] += 1
        asked.add(b["question"])
        used_passages.update(b["titles"])
        chosen.append(b)
        items.append(item(f"bridge-{len(items)}", b, texts))
    for name, b in zip(INVENTED, chosen, strict=False):  # the same shapes about names no passage holds
        named = max(b["named"], key=len)
        if named not in b["question"]:
            continue
        items.append({"id": f"absent-{len(items)}", "question": b["question"].replace(named, name),
                      "answer": "", "answerable": False, "paragraphs": []})  # fmt: skip
    check(items, corpus)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "questions.json").write_text(json.dumps(items, indent=1, ensure_ascii=False))
    answerable = sum(i.get("answerable", True) for i in items)
    print(
        f"{len(items)} questions ({answerable} answerable) from {len(found)} composable bridges -> {args.out}"
    )


def item(id_: str, b: dict, texts: dict[str, str]) -> dict:
    first, second = b["titles"]
    return {
        "id": id_, "question": b["question"], "answer": b["answer"],
        "question_decomposition": [
            {"question": b["hop1"], "answer": b["bridge"], "paragraph_support_idx": 0},
            {"question": b["hop2"], "answer": b["answer"], "paragraph_support_idx": 1},
        ],
        "paragraphs": [{"title": t, "paragraph_text": texts[t], "is_supporting": True} for t in (first, second)],
    }  # fmt: skip


def check(items: list[dict], corpus: list[dict]) -> None:
    """Each answer is written in a supporting passage; no invented name is in any passage."""
    problems = [
        f"{i['id']}: {i['answer']!r} is in no supporting paragraph"
        for i in items
        if i.get("answerable", True) and not any(i["answer"] in p["paragraph_text"] for p in i["paragraphs"])
    ]
    lowered = [p["text"].lower() for p in corpus]
    problems += [
        f"invented name {n!r} is in a passage" for n in INVENTED if any(n.lower() in t for t in lowered)
    ]
    if problems:
        raise SystemExit("\n".join(problems))


if __name__ == "__main__":
    main()

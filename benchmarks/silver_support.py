"""The silver-standard comparison behind ``bench_extractor.py --silver``.

A recorded LLM reply to the extraction prompt (``{messages, reply}``) is read with the LLM
extractor's own parser (:func:`engramdb.ingestion.extraction.llm.read_reply`) into the model's GSW;
the offline extractor runs on the same passage text and title. The model's workspace is the silver
standard: entity recall, entity-pair recall and precision, type agreement and atomic answers are
measured against it, per half of a fixed split by title hash and overall.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from engramdb.ingestion.extraction.llm import read_reply
from engramdb.ingestion.extraction.offline import ChunkText, OfflineExtractor
from engramdb.ingestion.gsw import ENTITY_TYPES, GSW, TYPE_SYNONYMS, Entity

HALVES = ("design", "held-out")
Normaliser = Callable[[str], str]


@dataclass(frozen=True)
class Recording:
    name: str
    title: str
    passage: str
    gsw: GSW

    @property
    def half(self) -> int:
        """0 ("design") or 1 ("held-out"), fixed by a hash of the title."""
        return int(hashlib.sha256(self.title.encode()).hexdigest(), 16) % 2


def load_recordings(folder: Path) -> list[Recording]:
    """The recorded passages of ``folder`` with the model's GSW, read by the LLM extractor's parser."""
    out = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text())
        user = next(content for role, content in data["messages"] if role == "human")
        title_line, passage = user.split("\n\nPassage:\n", 1)
        title = title_line.removeprefix("Document title: ")
        out.append(Recording(path.stem, title, passage, read_reply(json.loads(data["reply"]))))
    return out


def coarse_type(type_: str) -> str:
    """The prompt's coarse type set (as ``apply_rules`` maps types): offline-only types such as NORP -> THING."""
    type_ = type_.upper()
    if type_ in ENTITY_TYPES:
        return type_
    mapped = TYPE_SYNONYMS.get(type_.replace(" ", "_"))
    return mapped if mapped in ENTITY_TYPES else "THING"


def _keys(entity: Entity, norm: Normaliser) -> frozenset[str]:
    return frozenset(k for k in map(norm, [entity.name, *entity.aliases]) if k)


def _pairs(gsw: GSW, norm: Normaliser) -> dict[frozenset[str], tuple[Entity, Entity]]:
    """Unordered {question entity, answer entity} pairs by normalised names, with one entity pair each."""
    by_id = {e.id: e for e in gsw.entities}
    out: dict[frozenset[str], tuple[Entity, Entity]] = {}
    for qa in gsw.qa_pairs:
        for q in qa.question_entity_ids:
            for a in qa.answer_entity_ids:
                key = frozenset({norm(by_id[q].name), norm(by_id[a].name)})
                if len(key) == 2:
                    out.setdefault(key, (by_id[q], by_id[a]))
    return out


def _linked(pair: tuple[Entity, Entity], others: list[tuple[frozenset, frozenset]], norm: Normaliser) -> bool:
    a, b = (_keys(e, norm) for e in pair)
    return any((a & x and b & y) or (a & y and b & x) for x, y in others)


def _atomic(gsw: GSW) -> tuple[int, int]:
    names = {e.id: e.name for e in gsw.entities}
    ok = sum(1 for qa in gsw.qa_pairs if all(len(names[a].split()) <= 5 for a in qa.answer_entity_ids))
    return ok, len(gsw.qa_pairs)


@dataclass
class Tally:
    passages: int = 0
    model_entities: int = 0
    matched_entities: int = 0
    same_type: int = 0
    model_pairs: int = 0
    matched_pairs: int = 0
    offline_pairs: int = 0
    offline_pairs_in_model: int = 0
    offline_entities: int = 0
    offline_atomic: list[int] = field(default_factory=lambda: [0, 0])
    model_atomic: list[int] = field(default_factory=lambda: [0, 0])

    def add(self, other: Tally) -> None:
        for name, value in vars(other).items():
            if isinstance(value, list):
                mine = getattr(self, name)
                mine[0] += value[0]
                mine[1] += value[1]
            else:
                setattr(self, name, getattr(self, name) + value)

    def figures(self) -> dict[str, float | int]:
        def share(num: int, den: int) -> float:
            return num / den if den else float("nan")

        return {
            "passages": self.passages,
            "model_entities": self.model_entities,
            "offline_entities": self.offline_entities,
            "model_pairs": self.model_pairs,
            "offline_pairs": self.offline_pairs,
            "entity_recall": share(self.matched_entities, self.model_entities),
            "pair_recall": share(self.matched_pairs, self.model_pairs),
            "pair_precision": share(self.offline_pairs_in_model, self.offline_pairs),
            "type_agreement": share(self.same_type, self.matched_entities),
            "atomic_offline": share(*self.offline_atomic),
            "atomic_model": share(*self.model_atomic),
        }


@dataclass(frozen=True)
class Miss:
    kind: str  # "entity" or "pair"
    sides: tuple[tuple[str, ...], ...]  # per model entity of the miss, its name and aliases
    passage: str


def compare(rec: Recording, offline: GSW, norm: Normaliser) -> tuple[Tally, list[Miss]]:
    """The comparison of one passage: counts, and the model's entities and pairs the offline GSW misses."""
    t = Tally(passages=1, model_entities=len(rec.gsw.entities), offline_entities=len(offline.entities))
    misses: list[Miss] = []
    offline_by_key: dict[str, Entity] = {}
    for e in offline.entities:  # names first, so a match by name wins over one by alias
        offline_by_key.setdefault(norm(e.name), e)
    for e in offline.entities:
        for k in _keys(e, norm):
            offline_by_key.setdefault(k, e)
    for e in rec.gsw.entities:
        keys = [norm(e.name), *sorted(_keys(e, norm) - {norm(e.name)})]
        match = next((offline_by_key[k] for k in keys if k in offline_by_key), None)
        if match is None:
            misses.append(Miss("entity", ((e.name, *e.aliases),), rec.passage))
            continue
        t.matched_entities += 1
        t.same_type += coarse_type(e.type) == coarse_type(match.type)
    model_pairs, offline_pairs = _pairs(rec.gsw, norm), _pairs(offline, norm)
    model_keys = [(_keys(a, norm), _keys(b, norm)) for a, b in model_pairs.values()]
    offline_keys = [(_keys(a, norm), _keys(b, norm)) for a, b in offline_pairs.values()]
    t.model_pairs, t.offline_pairs = len(model_pairs), len(offline_pairs)
    for pair in model_pairs.values():
        if _linked(pair, offline_keys, norm):
            t.matched_pairs += 1
        else:
            misses.append(Miss("pair", tuple((e.name, *e.aliases) for e in pair), rec.passage))
    t.offline_pairs_in_model = sum(_linked(p, model_keys, norm) for p in offline_pairs.values())
    t.offline_atomic = list(_atomic(offline))
    t.model_atomic = list(_atomic(rec.gsw))
    return t, misses


# --------------------------------------------------------------------------- rough miss classes

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")
# Nationality adjectives (a short list: the classification is rough anyway).
_DEMONYM = re.compile(
    r"\b(?:American|British|English|Scottish|Welsh|Irish|French|German|Italian|Spanish|Portuguese|Dutch|Belgian|"
    r"Swiss|Austrian|Swedish|Norwegian|Danish|Finnish|Icelandic|Polish|Czech|Slovak|Hungarian|Romanian|"
    r"Bulgarian|Greek|Turkish|Russian|Ukrainian|Serbian|Croatian|Bosnian|Slovenian|Albanian|Estonian|Latvian|"
    r"Lithuanian|Canadian|Mexican|Brazilian|Argentine|Argentinian|Chilean|Peruvian|Colombian|Cuban|"
    r"Venezuelan|Jamaican|Australian|Zealand|Chinese|Japanese|Korean|Vietnamese|Thai|Indian|Pakistani|"
    r"Bangladeshi|Sri Lankan|Nepalese|Indonesian|Filipino|Malaysian|Iranian|Iraqi|Israeli|Egyptian|Nigerian|"
    r"Kenyan|Ethiopian|Ghanaian|Malawian|South African|Moroccan|Algerian|Tunisian|Saudi|Syrian|Lebanese|"
    r"Afghan|Soviet|Yugoslav|Prussian|Bavarian|Ottoman|Roman|Byzantine|Persian|European|African|Asian|Latin)\b"
)
MISS_CLASSES: dict[str, re.Pattern[str]] = {
    "apposition ', the ...'": re.compile(r",\s+(?:the|a|an|his|her|its|their)\s+\w+"),
    "copula 'X is a Y'": re.compile(r"\b(?:is|was|are|were)\s+(?:a|an|the|one)\b"),
    "list/coordination": re.compile(r"\w+,\s+[\w ]+,?\s+(?:and|or)\s+\w|\b[A-Z]\w+\s+(?:and|or|&)\s+[A-Z]\w+"),
    "possessive 's": re.compile(r"\w['’]s\b"),
    "parenthesised date '(born ...'": re.compile(r"\(\s*(?:born|b\.|died|d\.|c\.)|\([^)]*\b\d{3,4}\b[^)]*\)"),
    "nationality adjective": _DEMONYM,
    "relative clause who/which/that": re.compile(r"\b(?:who|whom|whose|which)\b|,\s*that\b"),
    "passive 'was ... by'": re.compile(r"\b(?:is|was|were|are|been|being)\s+(?:\w+ly\s+)?\w+(?:ed|en|wn|t)\s+by\b"),
}  # fmt: skip


def source_sentence(miss: Miss) -> str | None:
    """The first sentence naming every entity of the miss (by name or alias), else the first naming one of them."""
    sentences = _SENTENCE.split(miss.passage)
    named = [[any(n.lower() in s.lower() for n in side) for side in miss.sides] for s in sentences]
    for test in (all, any):
        for sentence, flags in zip(sentences, named, strict=True):
            if test(flags):
                return sentence
    return None


def classify(misses: list[Miss], sample: int | None = None, seed: int = 0) -> dict[str, dict[str, int]]:
    """Counts per rough class of the entity misses and of the pair misses (classes overlap).

    Every miss is classified unless ``sample`` asks for a fixed random sample; counting them all
    makes the counts of two extractor versions comparable as they stand.
    """
    out: dict[str, dict[str, int]] = {}
    for kind in ("entity", "pair"):
        of_kind = [m for m in misses if m.kind == kind]
        chosen = of_kind if sample is None else random.Random(seed).sample(of_kind, min(sample, len(of_kind)))
        counts: Counter[str] = Counter({"sampled": len(chosen), "total misses": len(of_kind)})
        for m in chosen:
            sentence = source_sentence(m)
            if sentence is None:
                counts["name not found verbatim in passage"] += 1
                continue
            hit = [name for name, pattern in MISS_CLASSES.items() if pattern.search(sentence)]
            counts.update(hit or ["other"])
        out[kind] = dict(counts)
    return out


# --------------------------------------------------------------------------- the run


def hop_coverage(extractor: OfflineExtractor, items: list[dict], norm: Normaliser) -> dict[str, float | int]:
    """Share of MuSiQue hops whose gold answer is an answer entity of its supporting paragraph's QA pairs.

    ``exact``: the normalised gold answer equals the normalised name or an alias of some QA pair's
    answer entity in the GSW of the hop's supporting paragraph; ``contained``: it is contained in
    such a name as whole words (the looser check of ``evaluate``'s answer recall).
    """
    paragraphs: dict[tuple[str, str], ChunkText] = {}
    for item in items:
        for hop in item["question_decomposition"]:
            p = item["paragraphs"][hop["paragraph_support_idx"]]
            paragraphs.setdefault(
                (p["title"], p["paragraph_text"]), ChunkText(p["paragraph_text"], p["title"])
            )
    keys = list(paragraphs)
    gsws = dict(zip(keys, extractor.extract_many([paragraphs[k] for k in keys]), strict=True))
    hops = exact = contained = 0
    for item in items:
        for hop in item["question_decomposition"]:
            p = item["paragraphs"][hop["paragraph_support_idx"]]
            gsw = gsws[(p["title"], p["paragraph_text"])]
            names: set[str] = set()
            for qa in gsw.qa_pairs:
                for a in qa.answer_entity_ids:
                    names |= _keys(gsw.entity(a), norm)
            gold = norm(hop["answer"])
            hops += 1
            exact += gold in names
            contained += any(gold and f" {gold} " in f" {n} " for n in names)
    return {"hops": hops, "exact": exact / hops, "contained": contained / hops}


def run_silver(
    extractor: OfflineExtractor, folder: Path, norm: Normaliser, musique: Path | None = None
) -> dict:
    """Figures per half and overall, offline throughput and miss classes for the recordings in ``folder``.

    With ``musique`` (a MuSiQue file with gold decompositions), also the hop coverage there.
    """
    recs = load_recordings(folder)
    chunks = [ChunkText(r.passage, r.title) for r in recs]
    extractor.extract_many(chunks[:20])  # warm up
    start, cpu = time.perf_counter(), time.process_time()
    offline = extractor.extract_many(chunks)
    speed = len(chunks) / (time.perf_counter() - start)
    cpu_speed = len(chunks) / max(1e-9, time.process_time() - cpu)  # less sensitive to other jobs
    halves = [Tally(), Tally()]
    misses: list[Miss] = []
    for rec, gsw in zip(recs, offline, strict=True):
        t, m = compare(rec, gsw, norm)
        halves[rec.half].add(t)
        misses.extend(m)
    overall = Tally()
    for t in halves:
        overall.add(t)
    return {
        "extractor": f"{extractor.name} v{extractor.version}",
        "folder": str(folder),
        HALVES[0]: halves[0].figures(),
        HALVES[1]: halves[1].figures(),
        "overall": overall.figures(),
        "passages_per_second": speed,
        "passages_per_cpu_second": cpu_speed,
        "n_process": extractor.n_process,
        "miss_classes": classify(misses),
        "hop_coverage": hop_coverage(extractor, json.loads(musique.read_text()), norm) if musique else None,
        "musique": str(musique) if musique else None,
    }


def _cell(value: float | int | None) -> str:
    if value is None:
        return f"{'-':>8}"
    return f"{value:>8.3f}" if isinstance(value, float) else f"{value:>8}"


def print_silver(result: dict, before: dict | None = None) -> None:
    """The figures (design | held-out | overall, each beside the ``before`` run's), throughput, hop
    coverage and the miss classes (counts before and after)."""
    print(f"extractor {result['extractor']} vs the model's GSW in {result['folder']}")
    if before:
        print(f"before = {before['extractor']} (stored run), after = this run")
    cols = [*HALVES, "overall"]
    sub = ["before", "after"] if before else ["after"]
    print(f"{'':>16} " + " ".join(f"{c:>{9 * len(sub) - 1}}" for c in cols))
    if before:
        print(f"{'':>16} " + " ".join(" ".join(f"{x:>8}" for x in sub) for _c in cols))
    for key in result["overall"]:
        cells = []
        for c in cols:
            if before:
                cells.append(_cell(before[c].get(key)))
            cells.append(_cell(result[c][key]))
        print(f"{key:>16} " + " ".join(cells))
    speed = f"{result['passages_per_second']:>8.1f}"
    if before:
        speed = f"{before['passages_per_second']:>8.1f} -> {result['passages_per_second']:.1f}"
    print(f"{'passages/s':>16} {speed} (offline, one extract_many over all passages after a warm-up, "
          f"n_process={result['n_process']}; the before figure is the stored run's, on a possibly busier machine)")  # fmt: skip
    if "passages_per_cpu_second" in result:
        was = (
            f"{before['passages_per_cpu_second']:>8.1f} -> "
            if before and "passages_per_cpu_second" in before
            else ""
        )
        print(f"{'per CPU second':>16} {was}{result['passages_per_cpu_second']:.1f} (passages per second of this "
              "process's CPU time: what one free core would do, whatever else the machine runs)")  # fmt: skip
    hop = result.get("hop_coverage")
    if hop:
        was = (before or {}).get("hop_coverage") or {}
        print(f"\nHop coverage on {result['musique']} ({hop['hops']} gold hops): share whose gold answer is an "
              "answer entity of its supporting paragraph's QA pairs")  # fmt: skip
        for key in ("exact", "contained"):
            prev = f"{was[key]:.3f} -> " if key in was else ""
            print(f"{key:>16} {prev}{hop[key]:.3f}")
    print(
        "\nModel entities/pairs the offline extractor misses, by rough class -- a rough classification "
        "by regexes on the source sentence (the first sentence naming the entities); a miss may fall in "
        "several classes, 'other' = none matched; every miss is counted:"
    )
    for kind, counts in result["miss_classes"].items():
        old = (before or {}).get("miss_classes", {}).get(kind, {})
        head = f"{old['total misses']} before, " if "total misses" in old else ""
        print(f"  {kind} misses: {head}{counts['total misses']} after")
        names = [n for n in counts if n not in ("sampled", "total misses")]
        names += [n for n in old if n not in counts and n not in ("sampled", "total misses")]
        for name in sorted(names, key=lambda n: -counts.get(n, 0)):
            prev = f"{old.get(name, 0):>6} -> " if old else ""
            print(f"    {name:<40} {prev}{counts.get(name, 0):>6}")

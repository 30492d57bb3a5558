"""Evaluation datasets: MuSiQue-style items or plain ``[{question, answer, ...}]``.

MuSiQue items carry gold decompositions and supporting paragraphs; the ids of
those paragraphs are computed exactly as ingestion computes document ids
(title + text hash), so recall@k can be checked against what retrieval
returns when the memory was built from a corpus containing them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engramdb.ingestion.documents import make_document
from engramdb.platform.errors import InputError


@dataclass(frozen=True)
class EvalItem:
    id: str
    question: str
    answers: tuple[str, ...]  # gold answer first, then aliases
    answerable: bool = True
    gold_decomposition: list[dict[str, Any]] | None = None
    supporting_doc_ids: tuple[str, ...] = ()
    paragraphs: list[dict[str, str]] = field(default_factory=list)


def load_dataset(path: Path) -> list[EvalItem]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise InputError(f"no such dataset file: {path}") from exc
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: invalid JSON at line {exc.lineno}: {exc.msg}") from exc
    if not isinstance(data, list) or not data:
        raise InputError(f"{path}: a dataset is a non-empty JSON list of question objects")
    return [_item(raw, i, path) for i, raw in enumerate(data)]


def _item(raw: Any, index: int, path: Path) -> EvalItem:
    where = f"{path} item {index}"
    if not isinstance(raw, dict):
        raise InputError(f"{where}: expected an object")
    question, answer = raw.get("question"), raw.get("answer")
    if not isinstance(question, str) or not question.strip():
        raise InputError(f"{where}: missing 'question'")
    answerable = bool(raw.get("answerable", True))
    if answerable and (not isinstance(answer, str) or not answer.strip()):
        raise InputError(f"{where}: missing 'answer' (or mark the item \"answerable\": false)")
    aliases = raw.get("answer_aliases") or []
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise InputError(f"{where}: 'answer_aliases' must be a list of strings")
    paragraphs = [
        {"title": p.get("title", ""), "text": p.get("paragraph_text") or p.get("text", ""),
         "is_supporting": bool(p.get("is_supporting"))}
        for p in raw.get("paragraphs") or []
    ]  # fmt: skip
    supporting = tuple(
        make_document(p["text"], title=p["title"]).id
        for p in paragraphs
        if p["is_supporting"] and p["text"].strip()
    )
    return EvalItem(
        id=str(raw.get("id", index)), question=question.strip(),
        answers=tuple(a for a in [answer or "", *aliases] if a), answerable=answerable,
        gold_decomposition=raw.get("question_decomposition"), supporting_doc_ids=supporting, paragraphs=paragraphs,
    )  # fmt: skip

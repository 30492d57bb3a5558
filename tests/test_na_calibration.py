"""How the N/A calibration draws the stored pairs its probes are built from (no graph needed:
the pairs are passed in as the ``chain/probe_pairs`` rows a graph would return)."""

from __future__ import annotations

from typing import Any

from engramdb.retrieval.na_calibration import draw_seeds


def _row(chunk: str, n: int, subject: str = "") -> dict[str, Any]:
    subject = subject or f"Person {chunk.upper()}"
    return {
        "chunk_id": chunk, "qa_id": f"{chunk}/q{n}", "question": f"Where was {subject} born ({n})?",
        "question_entity_ids": [f"e-{chunk}"], "question_entity_names": [subject],
        "answer_ids": [f"a-{chunk}-{n}"], "answer_names": [f"Town {n}"], "answer_types": ["PLACE"],
    }  # fmt: skip


def _memory(chunks: int, per_chunk: int = 3) -> dict[str, list[dict[str, Any]]]:
    return {f"c{i:03d}": [_row(f"c{i:03d}", n) for n in range(per_chunk)] for i in range(chunks)}


def _draw(memory: dict[str, list[dict[str, Any]]], count: int, seed: int = 7) -> list[str]:
    def read_pairs(chunk_ids: list[str]) -> list[dict[str, Any]]:
        return [row for c in chunk_ids for row in memory[c]]

    seeds = draw_seeds(sorted(memory), read_pairs, count, seed)
    return [row["question"] + " @" + row["chunk_id"] for row, _name in seeds]


def test_the_draw_takes_one_pair_per_chunk_and_is_reproducible() -> None:
    memory = _memory(200)
    drawn = _draw(memory, 40)
    assert len(drawn) == 40
    assert len({d.split(" @")[1] for d in drawn}) == 40  # one pair per chunk while chunks last
    assert _draw(memory, 40) == drawn
    assert _draw(memory, 40, seed=8) != drawn  # another seed, another sample


def test_a_small_memory_gives_more_than_one_pair_per_chunk() -> None:
    drawn = _draw(_memory(5, per_chunk=4), 12)
    assert len(drawn) == 12 and len(set(drawn)) == 12
    assert len({d.split(" @")[1] for d in drawn}) == 5


def test_a_change_to_a_few_chunks_changes_only_their_probes() -> None:
    """The draw is consistent: a document added or a few chunks' pairs reworded (what an
    extractor change or an ingest does) leaves every other probe where it was, so the bar a
    memory calibrates moves with the memory, not with the noise of a new sample."""
    memory = _memory(300)
    before = _draw(memory, 40)
    changed = dict(memory)
    for chunk in sorted(memory)[::30]:  # 10 chunks reworded: another extractor's pairs
        changed[chunk] = [_row(chunk, n + 10) for n in range(2)]
    for i in range(300, 330):  # and a document of 30 chunks added
        changed[f"c{i:03d}"] = [_row(f"c{i:03d}", n) for n in range(3)]
    after = _draw(changed, 40)
    kept = set(before) & set(after)
    touched = set(sorted(memory)[::30]) | {f"c{i:03d}" for i in range(300, 330)}
    assert all(d.split(" @")[1] in touched for d in set(after) - set(before))  # new: only from changes
    assert len(kept) >= 40 - sum(d.split(" @")[1] in touched for d in after)  # each change displaces one
    assert len(kept) >= 30  # a shuffled draw keeps about 40 * 40 / 330 of them


def test_chunks_without_a_usable_pair_are_passed_over() -> None:
    memory = _memory(50)
    for chunk in sorted(memory)[:25]:  # pairs whose subject is not a name: no probe from them
        memory[chunk] = [_row(chunk, n, subject="someone") for n in range(3)]
    drawn = _draw(memory, 20)
    assert len(drawn) == 20
    assert all(d.split(" @")[1] >= "c025" for d in drawn)

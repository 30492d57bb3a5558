"""The numbers behind the ``diffusion`` strategy, free of any store so they can be checked by hand.

* :func:`frequency_reward` and :func:`entity_activation` turn the top-K facts
  of a (sub-)question into the walk's restart distribution over entities:
  mean fact similarity × ``1 + α(1 − e^{−βc})`` ÷ ``max(1, chunks mentioning
  the entity)``. The reward favours entities that several retrieved facts
  agree on; the penalty keeps hub entities ("United States") from drowning the
  specific ones.
* :func:`transition_matrix` and :func:`random_walk_with_restart` run the walk
  ``π ← (1−γ)·P·π + γ·π₀`` on the passage–entity graph with ``P`` the
  column-normalised adjacency (column ``j`` holds the probabilities of moving
  from node ``j`` to each neighbour, so ``P·π`` keeps the walker's mass on a
  graph without isolated nodes). The iteration is a contraction with factor
  ``1−γ``, so it stops once the L1 change is below the tolerance; its fixed
  point is ``γ(I − (1−γ)P)⁻¹π₀``, which the tests check against a dense solve.
* :func:`minmax` and :func:`fuse` are CogniRank's score fusion
  ``ε·norm(diffusion) + (1−ε)·norm(dense)``.
* :func:`select_split` is the 2+2+1 rule: with parallel sub-questions each
  one contributes its best passages, then the best remaining passage overall
  fills the last slot.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

#: The δ of min-max normalisation: keeps a constant score vector finite (it normalises to zeros).
MINMAX_DELTA = 1e-12


def frequency_reward(hits: np.ndarray | float, alpha: float, beta: float) -> np.ndarray | float:
    """``1 + α(1 − e^{−β·hits})``: 1 for an entity no fact names, saturating at ``1 + α``."""
    return 1.0 + alpha * (1.0 - np.exp(-beta * np.asarray(hits, dtype=float)))


@dataclass(frozen=True)
class Activation:
    """One entity's initial activation and the parts it was made of (kept for ``--trace``)."""

    entity: int  # node index of the entity
    fact_evidence: float  # mean similarity of the top facts naming it
    hits: int  # how many of the top facts name it
    chunks: int  # chunks mentioning it in memory
    value: float  # fact_evidence × reward ÷ max(1, chunks)


def entity_activation(
    facts: Sequence[tuple[float, Sequence[int]]],
    chunk_counts: np.ndarray,
    alpha: float,
    beta: float,
) -> list[Activation]:
    """Initial activation of every entity named by the top facts.

    ``facts`` are ``(similarity, entity node indices)`` of the top-K facts;
    ``chunk_counts[i]`` is how many chunks mention entity ``i``. An entity named
    twice by the same fact counts once for that fact.

    A fact naming more than two entities gives each its similarity times
    ``2 / entities`` (:func:`fact_share`): the method's facts are triples, two
    entities each, while a GSW verb phrase may list a dozen ("the euro is the
    currency of Austria, Belgium, Cyprus, ..."). Unshared, such a list gave each
    rare member a whole fact's activation, so for a question about Brussels the
    walk started mostly from Malta and Latvia, not from Brussels.
    """
    totals: dict[int, float] = {}
    hits: dict[int, int] = {}
    for similarity, entities in facts:
        named = dict.fromkeys(entities)
        share = fact_share(len(named))
        for entity in named:
            totals[entity] = totals.get(entity, 0.0) + float(similarity) * share
            hits[entity] = hits.get(entity, 0) + 1
    out = []
    for entity in sorted(totals):
        evidence = totals[entity] / hits[entity]
        chunks = int(chunk_counts[entity])
        value = evidence * float(frequency_reward(hits[entity], alpha, beta)) / max(1, chunks)
        out.append(Activation(entity, evidence, hits[entity], chunks, value))
    return out


def fact_share(entities: int) -> float:
    """The part of a fact's similarity each of its ``entities`` receives: whole for up to two (a
    triple's subject and object), ``2 / entities`` beyond, so a fact weighs two entities' worth."""
    return 1.0 if entities <= 2 else 2.0 / entities


def restart_vector(activations: Sequence[Activation], size: int) -> np.ndarray:
    """π₀: the activations as a distribution over all ``size`` nodes (zeros when nothing is active).

    Only the direction matters downstream (min-max normalisation), and a unit
    mass makes the L1 tolerance mean the same for every question.
    """
    vector = np.zeros(size, dtype=np.float64)
    for a in activations:
        vector[a.entity] += max(a.value, 0.0)
    total = vector.sum()
    return vector / total if total > 0 else vector


def transition_matrix(size: int, edges: Sequence[tuple[int, int, float]] | np.ndarray) -> sp.csr_matrix:
    """Column-normalised adjacency ``P`` of an undirected weighted graph on ``size`` nodes.

    ``edges`` are ``(u, v, weight)``; each is added in both directions and
    parallel edges add up. A node without edges has a zero column (its mass
    leaves the walk, which then only restarts).
    """
    array = np.asarray(edges, dtype=np.float64).reshape(-1, 3)
    rows = np.concatenate([array[:, 0], array[:, 1]]).astype(np.int64)
    cols = np.concatenate([array[:, 1], array[:, 0]]).astype(np.int64)
    weights = np.concatenate([array[:, 2], array[:, 2]])
    adjacency = sp.csr_matrix((weights, (rows, cols)), shape=(size, size))
    adjacency.sum_duplicates()
    degree = np.asarray(adjacency.sum(axis=0)).ravel()
    inverse = np.divide(1.0, degree, out=np.zeros_like(degree), where=degree > 0)
    return (adjacency @ sp.diags(inverse)).tocsr()


@dataclass(frozen=True)
class WalkResult:
    scores: np.ndarray
    iterations: int
    change: float  # L1 change of the last iteration
    converged: bool


def random_walk_with_restart(
    transition: sp.csr_matrix,
    restart: np.ndarray,
    restart_probability: float,
    tolerance: float,
    max_iterations: int = 200,
) -> WalkResult:
    """Iterate ``π ← (1−γ)·P·π + γ·π₀`` from ``π₀`` until the L1 change is below ``tolerance``."""
    if not 0.0 < restart_probability <= 1.0:
        raise ValueError(f"restart probability must be in (0, 1], got {restart_probability}")
    keep = 1.0 - restart_probability
    anchor = restart_probability * restart
    scores = restart.astype(np.float64, copy=True)
    change = float("inf")
    for iteration in range(1, max_iterations + 1):
        updated = keep * (transition @ scores) + anchor
        change = float(np.abs(updated - scores).sum())
        scores = updated
        if change < tolerance:
            return WalkResult(scores, iteration, change, True)
    return WalkResult(scores, max_iterations, change, False)


def minmax(values: np.ndarray, delta: float = MINMAX_DELTA) -> np.ndarray:
    """``(x − min) / (max − min + δ)`` over the candidate set (all zeros for a constant vector)."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return values
    low = values.min()
    return (values - low) / (values.max() - low + delta)


def fuse(diffusion: np.ndarray, dense: np.ndarray, epsilon: float) -> np.ndarray:
    """CogniRank: ``ε·minmax(diffusion) + (1−ε)·minmax(dense)``."""
    return epsilon * minmax(diffusion) + (1.0 - epsilon) * minmax(dense)


def top_indices(scores: np.ndarray, k: int) -> list[int]:
    """Indices of the ``k`` highest scores, best first (ties: lower index first)."""
    k = min(k, scores.size)
    if k <= 0:
        return []
    part = np.argpartition(-scores, k - 1)[:k] if k < scores.size else np.arange(scores.size)
    return sorted(part.tolist(), key=lambda i: (-scores[i], i))


def split_quota(parts: int, k: int) -> int:
    """Passages each parallel sub-question contributes before the global fill: 2 of 5 for two parts."""
    if parts <= 1:
        return k
    return max(1, (k - 1) // parts)


def select_split(rankings: Sequence[Sequence[tuple[str, float]]], k: int) -> list[tuple[str, float]]:
    """2+2+1: each ranking's best ``split_quota`` unseen passages in turn, then the best remaining overall.

    ``rankings`` are one best-first ``(passage id, score)`` list per
    sub-question; a passage's overall score is its best score in any ranking.
    Returns ``(passage id, score)`` in selection order.
    """
    quota = split_quota(len(rankings), k)
    chosen: dict[str, float] = {}
    for ranking in rankings:
        taken = 0
        for passage, score in ranking:
            if len(chosen) >= k or taken >= quota:
                break
            if passage not in chosen:
                chosen[passage] = score
                taken += 1
    best: Mapping[str, float] = _best_scores(rankings)
    rest = sorted((p for p in best if p not in chosen), key=lambda p: (-best[p], p))
    for passage in rest[: max(0, k - len(chosen))]:
        chosen[passage] = best[passage]
    return list(chosen.items())


def _best_scores(rankings: Sequence[Sequence[tuple[str, float]]]) -> dict[str, float]:
    best: dict[str, float] = {}
    for ranking in rankings:
        for passage, score in ranking:
            if score > best.get(passage, float("-inf")):
                best[passage] = score
    return best

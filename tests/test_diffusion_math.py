"""The diffusion strategy's formulas on hand-computed values, and its walk against a dense solve."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engramdb.retrieval.diffusion.strategy import title_keys, walk_graph
from engramdb.retrieval.diffusion.walk import (
    entity_activation,
    fact_share,
    frequency_reward,
    fuse,
    minmax,
    random_walk_with_restart,
    restart_vector,
    select_split,
    split_quota,
    top_indices,
    transition_matrix,
)

# A small passage–entity graph: entities 0..3, chunks 4..6, node 7 isolated.
# MENTIONS: chunk 4 - {0, 1}, chunk 5 - {1, 2}, chunk 6 - {2, 3}; fact edges 0-1 (twice) and 2-3.
EDGES = [(0, 4, 1.0), (1, 4, 1.0), (1, 5, 1.0), (2, 5, 1.0), (2, 6, 1.0), (3, 6, 1.0),
         (0, 1, 1.0), (0, 1, 1.0), (2, 3, 1.0)]  # fmt: skip
SIZE = 8


def dense_fixed_point(
    edges: list[tuple[int, int, float]], size: int, restart: np.ndarray, gamma: float
) -> np.ndarray:
    """π* = γ (I − (1−γ)P)⁻¹ π₀ with P built independently, densely, from the edge list."""
    adjacency = np.zeros((size, size))
    for u, v, w in edges:
        adjacency[u, v] += w
        adjacency[v, u] += w
    degree = adjacency.sum(axis=0)
    p = np.zeros_like(adjacency)
    nonzero = degree > 0
    p[:, nonzero] = adjacency[:, nonzero] / degree[nonzero]
    return np.linalg.solve(np.eye(size) - (1 - gamma) * p, gamma * restart)


def test_transition_matrix_is_column_stochastic_with_summed_parallel_edges() -> None:
    p = transition_matrix(SIZE, EDGES).toarray()
    sums = p.sum(axis=0)
    assert np.allclose(sums[:7], 1.0)
    assert sums[7] == 0.0  # the isolated node has a zero column
    # entity 0: chunk 4 (weight 1) and entity 1 (two parallel fact edges, weight 2) -> 1/3 and 2/3
    assert p[4, 0] == pytest.approx(1 / 3) and p[1, 0] == pytest.approx(2 / 3)
    assert np.allclose(p, transition_matrix(SIZE, [(v, u, w) for u, v, w in EDGES]).toarray())


@pytest.mark.parametrize("gamma", [0.15, 0.5, 0.85])
def test_walk_matches_dense_linear_algebra_fixed_point(gamma: float) -> None:
    restart = np.array([0.7, 0.0, 0.0, 0.3, 0.0, 0.0, 0.0, 0.0])
    walk = random_walk_with_restart(
        transition_matrix(SIZE, EDGES), restart, gamma, tolerance=1e-13, max_iterations=5000
    )
    expected = dense_fixed_point(EDGES, SIZE, restart, gamma)
    assert walk.converged and walk.change < 1e-13
    assert np.allclose(walk.scores, expected, atol=1e-11)
    assert walk.scores.sum() == pytest.approx(1.0)  # no dangling node is reached: mass is conserved
    assert walk.scores[7] == 0.0


def test_walk_stops_at_the_tolerance_and_reports_non_convergence() -> None:
    restart = restart_vector([], SIZE)
    restart[0] = 1.0
    transition = transition_matrix(SIZE, EDGES)
    loose = random_walk_with_restart(transition, restart, 0.5, tolerance=1e-3)
    tight = random_walk_with_restart(transition, restart, 0.5, tolerance=1e-9)
    assert loose.converged and tight.converged and loose.iterations < tight.iterations
    expected = dense_fixed_point(EDGES, SIZE, restart, 0.5)
    # a contraction with factor 1−γ: distance to the fixed point ≤ change·(1−γ)/γ
    assert np.abs(loose.scores - expected).sum() <= loose.change * 1.0 + 1e-12
    capped = random_walk_with_restart(transition, restart, 0.5, tolerance=1e-12, max_iterations=2)
    assert not capped.converged and capped.iterations == 2
    with pytest.raises(ValueError, match="restart probability"):
        random_walk_with_restart(transition, restart, 0.0, tolerance=1e-6)


def test_frequency_reward_on_hand_computed_values() -> None:
    assert frequency_reward(0, alpha=2.0, beta=1.0) == pytest.approx(1.0)
    assert frequency_reward(1, alpha=2.0, beta=1.0) == pytest.approx(2.2642411176571153)  # 1 + 2(1 − e⁻¹)
    assert frequency_reward(3, alpha=2.0, beta=1.0) == pytest.approx(2.900425863264272)  # 1 + 2(1 − e⁻³)
    assert frequency_reward(2, alpha=1.0, beta=0.5) == pytest.approx(1.6321205588285577)  # 1 + (1 − e⁻¹)
    assert frequency_reward(50, alpha=2.0, beta=1.0) == pytest.approx(3.0)  # saturates at 1 + α


def test_entity_activation_combines_fact_evidence_reward_and_chunk_penalty() -> None:
    facts = [(0.8, [0, 1]), (0.6, [1, 2]), (0.5, [1, 1])]  # entity 1 twice in one fact: one hit
    counts = np.array([1, 4, 0])
    by_entity = {a.entity: a for a in entity_activation(facts, counts, alpha=2.0, beta=1.0)}
    assert set(by_entity) == {0, 1, 2}
    # entity 0: mean 0.8, one hit (reward 2.26424), one chunk
    assert by_entity[0].value == pytest.approx(0.8 * 2.2642411176571153)
    # entity 1: mean (0.8 + 0.6 + 0.5) / 3, three hits (reward 2.90043), four chunks
    assert by_entity[1].fact_evidence == pytest.approx(0.6333333333333333)
    assert by_entity[1].hits == 3 and by_entity[1].chunks == 4
    assert by_entity[1].value == pytest.approx(0.6333333333333333 * 2.900425863264272 / 4)
    # entity 2: no chunk mentions it: divided by max(1, 0) = 1
    assert by_entity[2].value == pytest.approx(0.6 * 2.2642411176571153)
    restart = restart_vector(list(by_entity.values()), 5)
    assert restart.sum() == pytest.approx(1.0) and restart[3] == restart[4] == 0.0
    assert restart[0] / restart[2] == pytest.approx(0.8 / 0.6)
    assert not restart_vector([], 4).any()


def test_a_fact_listing_many_entities_weighs_two_entities_worth() -> None:
    # a triple-like fact about the asked entity (0) against a list fact naming six rare entities
    facts = [(0.9, [0, 1]), (0.8, [1, 2, 3, 4, 5, 6, 7])]
    counts = np.array([3, 10, 1, 1, 1, 1, 1, 1])
    by_entity = {a.entity: a for a in entity_activation(facts, counts, alpha=2.0, beta=1.0)}
    assert fact_share(1) == fact_share(2) == 1.0 and fact_share(7) == pytest.approx(2 / 7)
    assert by_entity[2].value == pytest.approx(0.8 * 2 / 7 * 2.2642411176571153)
    # entity 1 is in both: its evidence averages the triple's whole similarity and the list's share
    assert by_entity[1].fact_evidence == pytest.approx((0.9 + 0.8 * 2 / 7) / 2)
    # unshared, each list member (one chunk) would start with 2.7× the asked entity's mass
    assert by_entity[0].value > by_entity[2].value


def test_minmax_and_fusion_on_hand_computed_values() -> None:
    diffusion = np.array([0.0, 2.0, 1.0])
    dense = np.array([0.5, 0.1, 0.3])
    assert np.allclose(minmax(diffusion), [0.0, 1.0, 0.5])
    assert np.allclose(minmax(dense), [1.0, 0.0, 0.5])
    assert np.allclose(fuse(diffusion, dense, epsilon=0.95), [0.05, 0.95, 0.5])
    assert np.allclose(fuse(diffusion, dense, epsilon=0.0), minmax(dense))
    assert np.allclose(fuse(diffusion, dense, epsilon=1.0), minmax(diffusion))
    assert np.allclose(minmax(np.array([3.0, 3.0])), [0.0, 0.0])  # δ keeps a constant vector finite
    assert top_indices(np.array([0.1, 0.9, 0.5, 0.9]), 3) == [1, 3, 2]


def test_two_plus_two_plus_one_selection() -> None:
    first = [("a", 0.9), ("b", 0.8), ("c", 0.7)]
    second = [("b", 0.95), ("d", 0.6), ("e", 0.5), ("c", 0.4)]
    chosen = select_split([first, second], k=5)
    # two from the first, two new ones from the second (b is taken), then the best remaining overall
    assert [p for p, _ in chosen] == ["a", "b", "d", "e", "c"]
    assert dict(chosen)["c"] == pytest.approx(0.7)  # its best score over both sub-questions
    assert split_quota(2, 5) == 2 and split_quota(3, 5) == 1 and split_quota(1, 5) == 5
    three = select_split([[("a", 0.9), ("x", 0.8)], [("b", 0.3), ("y", 0.2)], [("c", 0.5), ("z", 0.99)]], k=5)
    assert [p for p, _ in three] == ["a", "b", "c", "z", "x"]
    assert [p for p, _ in select_split([[("a", 1.0)], [("a", 0.5)]], k=5)] == ["a"]  # fewer candidates than k


def test_reward_is_monotone_and_bounded() -> None:
    values = [float(frequency_reward(c, 2.0, 1.0)) for c in range(10)]
    assert values == sorted(values) and values[-1] < 3.0
    assert math.isclose(values[0], 1.0)


def test_walk_graph_links_mentions_titles_facts_and_same_name_entities() -> None:
    # entities: 0 Kassel (a city), 1 Kassel (typed otherwise, from another passage), 2 Fulda River,
    # 3 Duke Ferdinand, 4 American, 5 United States, 6 Brand
    entity_ids = ["kassel", "kassel-org", "fulda", "ferdinand", "american", "usa", "brand"]
    keys = ["kassel", "kassel", "fulda river", "duke ferdinand", "american", "united states", "brand"]
    chunk_ids = ["c-kassel", "c-siege", "c-brand"]
    titles = ["Kassel", "Siege of Cassel (1761)", "Brand (play)"]
    mentions = [["c-kassel", "fulda"], ["c-kassel", "american"], ["c-siege", "kassel-org"],
                ["c-siege", "ferdinand"], ["c-siege", "ferdinand"], ["c-brand", "usa"]]  # fmt: skip
    facts = [["ferdinand", "kassel-org"], ["kassel", "fulda", "american"], ["ghost", "brand"]]
    aliases = [["american", "united states"], ["fulda", "fulda"], ["usa", "us"], ["missing", "american"]]
    graph = walk_graph(entity_ids, keys, chunk_ids, titles, mentions, facts, aliases)
    e = {name: i for i, name in enumerate(entity_ids)}
    c = {name: len(entity_ids) + i for i, name in enumerate(chunk_ids)}
    pairs = {frozenset((u, v)) for u, v, _ in graph.edges}
    # a duplicated MENTIONS counts once; the title names "Kassel" (not mentioned there yet) and
    # "Brand" once its disambiguator is dropped; "Siege of Cassel" names no entity
    assert graph.kinds == {"mentions": 5, "titles": 3, "facts": 4, "synonyms": 2}
    assert {frozenset((e["kassel"], c["c-kassel"])), frozenset((e["kassel-org"], c["c-kassel"])),
            frozenset((e["brand"], c["c-brand"]))} <= pairs  # fmt: skip
    assert frozenset((e["kassel"], e["kassel-org"])) in pairs  # same name, kept apart by reconciliation
    assert frozenset((e["american"], e["usa"])) in pairs  # a multi-word alias names another node
    assert list(graph.chunk_counts) == [1, 2, 1, 1, 1, 1, 1]  # mentions and title links per entity
    p = transition_matrix(len(entity_ids) + len(chunk_ids), graph.edges).toarray()
    assert np.allclose(p.sum(axis=0), 1.0)  # every node has an edge: the matrix is column-stochastic
    assert title_keys("Siege of Cassel (1761)") == {"siege of cassel 1761", "siege of cassel"}
    assert title_keys("") == set()

"""The pure clustering steps of the ``clusters`` stage, on small hand-made networks.

The stage stores this state in Neo4j (tests/test_clusters.py); here the state
between two growth steps is a plain dict of node states, so each step's rules
(link score, ego-network components, label inheritance, propagation, and
which nodes a change touches) can be checked exactly.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable, Mapping

import pytest

from engramdb.ingestion.stages.cluster_algorithms import (
    LevelView,
    NodeState,
    Replica,
    edge_score,
    ego_components,
    fresh_label,
    group_members,
    growth_token,
    inter_cluster_links,
    majority_label,
    propagate_labels,
    replicate,
    top_neighbours,
    update_level,
)


class Stored:
    """Node states between growth steps (what the stage keeps in Neo4j), for the pure functions."""

    def __init__(self) -> None:
        self.nodes: dict[str, NodeState] = {}
        self.loaded: list[str] = []

    def load(self, ids: Iterable[str]) -> Mapping[str, NodeState]:
        ids = list(ids)
        self.loaded.extend(ids)
        return {i: copy.deepcopy(self.nodes[i]) for i in ids if i in self.nodes}

    def view(self) -> LevelView:
        self.loaded = []
        return LevelView(self.load)

    def save(self, view: LevelView, nodes: Iterable[str], removed: Iterable[str] = ()) -> None:
        for node_id in nodes:
            self.nodes[node_id] = copy.deepcopy(view.state(node_id))
        for node_id in removed:
            self.nodes.pop(node_id, None)
        for node_id, state in view.nodes.items():  # links of untouched nodes change too (new edges)
            if node_id in self.nodes:
                self.nodes[node_id].neighbours = dict(state.neighbours)

    def groups(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for node_id, state in self.nodes.items():
            for replica in state.replicas:
                out.setdefault(replica.label, set()).add(node_id)
        return out


def grow(stored: Stored, links: Mapping[str, Mapping[str, float]], removed: Iterable[str] = (), **kw):
    view = stored.view()
    removed = set(removed)
    change = update_level(view, links, removed, token=growth_token(0, links, removed), level=0,
                          max_rounds=kw.get("max_rounds", 50), replace_edges=kw.get("replace", False))  # fmt: skip
    stored.save(view, change.affected | set(links), removed)
    return change, view


def triangle_links(a: str, b: str, c: str, w: float = 0.9) -> dict[str, dict[str, float]]:
    return {a: {b: w, c: w}, b: {c: w}, c: {}}


# --------------------------------------------------------------------------- link scores


def test_edge_score_adds_proximity_only_within_a_document() -> None:
    same = edge_score(0.8, True, 1, alpha=0.7, sigma=1.5)
    assert same == pytest.approx(0.7 * 0.8 + 0.3 * math.exp(-1 / (2 * 1.5**2)))
    assert edge_score(0.8, False, 1, alpha=0.7, sigma=1.5) == pytest.approx(0.56)
    assert edge_score(0.8, True, 0, alpha=1.0, sigma=1.5) == pytest.approx(0.8)  # alpha 1: cosine only
    far = edge_score(0.8, True, 20, alpha=0.7, sigma=1.5)
    assert far == pytest.approx(0.56, abs=1e-6)  # proximity decays to nothing


def test_top_neighbours_keeps_k_best_above_theta_without_itself() -> None:
    scored = {"self": 1.0, "a": 0.9, "b": 0.7, "c": 0.7, "d": 0.4, "e": 0.8}
    assert top_neighbours("self", scored, k=3, theta=0.5) == {"a": 0.9, "e": 0.8, "b": 0.7}  # tie b/c by id
    assert top_neighbours("self", scored, k=10, theta=0.75) == {"a": 0.9, "e": 0.8}


# --------------------------------------------------------------------------- disentanglement


def test_ego_network_components_exclude_the_node_itself() -> None:
    stored = Stored()
    view = stored.view()
    for a, b in [("v", "a"), ("v", "b"), ("v", "c"), ("v", "d"), ("a", "b"), ("c", "d"), ("d", "x")]:
        view.link(a, b, 0.9)
    assert ego_components(view, "v") == [frozenset({"a", "b"}), frozenset({"c", "d"})]
    assert ego_components(view, "x") == [frozenset({"d"})]
    assert ego_components(view, "lonely") == []


def test_only_nodes_whose_replicas_changed_count_as_changed() -> None:
    stored = Stored()
    grow(stored, {**triangle_links("a1", "a2", "a3"), **triangle_links("z1", "z2", "z3")})
    # a new node links to z1, and the link a1-a2 is reweighted
    change, view = grow(stored, {"new": {"z1": 0.9}, "a1": {"a2": 0.8}})
    changed = {node for node in change.affected if view.replicas_changed(node)}
    assert change.affected == {"new", "z1", "a1", "a2"}
    # new has nothing stored; z1 got a component for it; a1 and a2 were re-replicated but their
    # ego networks and labels came out exactly as stored, so they need no rewrite
    assert changed == {"new", "z1"}


def test_replicas_inherit_labels_by_overlap_and_splits_get_a_fresh_label() -> None:
    old = [
        Replica("v~r0", "v", "L-ab", frozenset({"a", "b", "e"})),
        Replica("v~r1", "v", "L-cd", frozenset({"c", "d"})),
    ]
    parts = [frozenset({"a", "b"}), frozenset({"c", "d", "f"}), frozenset({"e"})]
    replicas = replicate("v", parts, old, lambda rid: f"new:{rid}")
    assert [r.label for r in replicas] == ["L-ab", "L-cd", "new:v~r2"]
    assert [r.members for r in replicas] == parts
    # An isolated node that gains neighbours carries its cluster over to its largest component.
    lonely = [Replica("v~r0", "v", "L-alone", frozenset())]
    grown = replicate("v", [frozenset({"a"}), frozenset({"b", "c"})], lonely, lambda rid: f"new:{rid}")
    assert [r.label for r in grown] == ["new:v~r0", "L-alone"]
    # An isolated node keeps one replica and its cluster; a brand-new isolated node gets a fresh label.
    assert [r.label for r in replicate("v", [], old, lambda rid: "fresh")] == ["L-ab"]
    assert [(r.label, r.members) for r in replicate("n", [], [], lambda rid: "fresh")] == [
        ("fresh", frozenset())
    ]


def test_fresh_labels_are_reproducible_and_distinct_per_step() -> None:
    assert fresh_label("v~r0", "t1", 0) == fresh_label("v~r0", "t1", 0)
    assert fresh_label("v~r0", "t1", 0) != fresh_label("v~r0", "t2", 0)
    assert fresh_label("v~r0", "t1", 1).startswith("c2-")
    assert growth_token(0, ["a", "b"], []) == growth_token(0, ["b", "a"], [])
    assert growth_token(0, ["a"], []) != growth_token(0, [], ["a"])


# --------------------------------------------------------------------------- label propagation


def test_majority_label_weighs_edges_and_prefers_the_current_label_on_ties() -> None:
    me = Replica("m~r0", "m", "mine", frozenset())
    heavy = [(Replica("x~r0", "x", "B", frozenset()), 0.9), (Replica("y~r0", "y", "A", frozenset()), 0.5),
             (Replica("z~r0", "z", "A", frozenset()), 0.3)]  # fmt: skip
    assert majority_label(me, heavy) == "B"
    tie = [(Replica("x~r0", "x", "mine", frozenset()), 0.5), (Replica("y~r0", "y", "A", frozenset()), 0.5)]
    assert majority_label(me, tie) == "mine"
    assert majority_label(me, []) == "mine"


def test_a_bridge_node_belongs_to_both_clusters_it_bridges() -> None:
    stored = Stored()
    links = {**triangle_links("a1", "a2", "a3"), **triangle_links("b1", "b2", "b3")}
    links["v"] = {"a1": 0.8, "a2": 0.8, "b1": 0.8, "b2": 0.8}
    change, _ = grow(stored, links)
    assert change.propagation.converged
    groups = stored.groups()
    with_v = [members for members in groups.values() if "v" in members]
    assert len(stored.nodes["v"].replicas) == 2
    assert sorted(map(sorted, with_v)) == [["a1", "a2", "a3", "v"], ["b1", "b2", "b3", "v"]]


def test_a_new_node_joins_the_existing_cluster_and_distant_nodes_are_untouched() -> None:
    stored = Stored()
    first = {**triangle_links("a1", "a2", "a3"), **triangle_links("z1", "z2", "z3")}
    first["a4"] = {"a1": 0.9, "a2": 0.9, "a3": 0.9}
    grow(stored, first)
    before = stored.groups()
    label_a = stored.nodes["a1"].replicas[0].label
    label_z = stored.nodes["z1"].replicas[0].label
    change, _ = grow(stored, {"new": {"a1": 0.9, "a4": 0.8}})
    assert stored.nodes["new"].replicas[0].label == label_a  # joins, the old nodes keep their label
    assert change.added_to == {label_a: {"new"}} and not change.left
    assert not {"z1", "z2", "z3"} & set(stored.loaded)  # the other triangle was never even read
    assert stored.groups()[label_z] == before[label_z]
    assert group_members(before, change, change.changed_labels) == {label_a: before[label_a] | {"new"}}


def test_removing_a_node_updates_only_its_groups() -> None:
    stored = Stored()
    links = {**triangle_links("a1", "a2", "a3"), **triangle_links("b1", "b2", "b3")}
    links["v"] = {"a1": 0.8, "a2": 0.8, "b1": 0.8, "b2": 0.8}
    grow(stored, links)
    before = stored.groups()
    change, _ = grow(stored, {}, removed=["v"])
    after = stored.groups()
    assert all("v" not in members for members in after.values())
    assert change.changed_labels == {label for label, members in before.items() if "v" in members}
    for label in change.changed_labels:
        assert group_members(before, change, [label])[label] == before[label] - {"v"}
    assert all(not any("v" in n for n in s.neighbours) for s in stored.nodes.values())


def test_propagation_stops_at_the_round_cap() -> None:
    stored = Stored()
    # A path whose labels ripple one hop per round: one round is not enough to settle it.
    view = stored.view()
    chain = [f"n{i}" for i in range(8)]
    for a, b in zip(chain, chain[1:], strict=False):
        view.link(a, b, 0.9)
    for i, node in enumerate(chain):
        view.state(node).replicas = replicate(
            node, ego_components(view, node), [], lambda rid, i=i: f"L{i:02d}"
        )
    capped = propagate_labels(view, [r for n in chain for r in view.state(n).replicas], max_rounds=1)
    assert capped.rounds == 1 and not capped.converged
    settled = propagate_labels(view, [r for n in chain for r in view.state(n).replicas], max_rounds=100)
    assert settled.converged


def test_an_established_cluster_absorbs_a_new_neighbour_instead_of_dissolving() -> None:
    for name in ("zz-new", "aa-new"):  # ids that sort after and before the established node
        stored = Stored()
        grow(stored, {"old": {}})  # a chunk with no neighbour: a cluster of its own
        label = stored.nodes["old"].replicas[0].label
        change, _ = grow(stored, {name: {"old": 0.9}})
        assert stored.nodes[name].replicas[0].label == stored.nodes["old"].replicas[0].label == label
        assert not change.left and change.added_to == {label: {name}}


# --------------------------------------------------------------------------- the level above


def test_clusters_link_through_the_replica_edges_that_cross_them() -> None:
    stored = Stored()
    edges = {("a1", "a2"): 0.9, ("a2", "b1"): 0.5, ("b1", "b2"): 0.9, ("v", "a1"): 0.8, ("v", "b2"): 0.8,
             ("z1", "z2"): 0.9}  # fmt: skip
    # node -> [(label, ego-network component)]: v bridges clusters A and B, one replica in each.
    replicas = {"a1": [("A", {"a2"}), ("A", {"v"})], "a2": [("A", {"a1"}), ("A", {"b1"})],
                "b1": [("B", {"a2"}), ("B", {"b2"})], "b2": [("B", {"b1"}), ("B", {"v"})],
                "v": [("A", {"a1"}), ("B", {"b2"})], "z1": [("Z", {"z2"})], "z2": [("Z", {"z1"})]}  # fmt: skip
    for node, parts in replicas.items():
        neighbours = {b if a == node else a: w for (a, b), w in edges.items() if node in (a, b)}
        stored.nodes[node] = NodeState(node, neighbours, [
            Replica(f"{node}~r{i}", node, label, frozenset(members)) for i, (label, members) in enumerate(parts)
        ])  # fmt: skip
    groups = stored.groups()
    assert groups["A"] == {"a1", "a2", "v"} and groups["B"] == {"b1", "b2", "v"}
    out = inter_cluster_links(stored.view(), groups)
    # Only a2-b1 leaves one cluster for the other; v, in both, does not link them by itself.
    assert out == {"A": {"B": pytest.approx(0.5)}, "B": {"A": pytest.approx(0.5)}, "Z": {}}
    # Linking some clusters reads only their members and the members' neighbours.
    only = inter_cluster_links(stored.view(), {"A": groups["A"]})
    assert only == {"A": out["A"]} and not {"z1", "z2"} & set(stored.loaded)


def test_two_grown_communities_link_through_their_crossing_edges() -> None:
    def clique(names: list[str], w: float = 0.9) -> dict[str, dict[str, float]]:
        return {a: {b: w for b in names[i + 1 :]} for i, a in enumerate(names)}

    stored = Stored()
    grow(stored, clique([f"a{i}" for i in range(5)]))
    links = clique([f"b{i}" for i in range(5)])
    links["b0"].update({"a0": 0.3, "a1": 0.3})
    links["b1"].update({"a0": 0.3})
    grow(stored, links)  # a second community, joined to the first by three weak links
    groups = stored.groups()
    a = stored.nodes["a0"].replicas[0].label
    b = stored.nodes["b0"].replicas[0].label
    assert groups == {a: {f"a{i}" for i in range(5)}, b: {f"b{i}" for i in range(5)}}
    out = inter_cluster_links(stored.view(), groups)
    assert out == {a: {b: pytest.approx(0.9)}, b: {a: pytest.approx(0.9)}}  # the three crossing edges


def test_relinking_touches_only_the_ends_of_changed_links_and_their_common_neighbours() -> None:
    stored = Stored()
    # x is linked to a and b, which are not linked to each other: x has two replicas.
    links = {"x": {"a": 0.5, "b": 0.5}, "a": {"p": 0.5}, "b": {"q": 0.5}, "far": {"y": 0.5}}
    grow(stored, links, replace=True)
    assert len(stored.nodes["x"].replicas) == 2
    same, _ = grow(stored, {"a": {"x": 0.5, "p": 0.5}}, replace=True)  # a re-linked, nothing changed
    assert same.affected == {"a"} and not same.changed_labels and not same.linked
    reweighted, _ = grow(stored, {"a": {"x": 0.9, "p": 0.5}}, replace=True)
    assert reweighted.linked == {"a", "x"} and "p" not in reweighted.affected
    # A new link a-b joins x's two ego components: x is re-replicated although none of its links changed.
    joined, _ = grow(stored, {"a": {"x": 0.9, "p": 0.5, "b": 0.5}}, replace=True)
    assert {"a", "b", "x"} <= joined.affected and not {"far", "y"} & joined.affected
    assert len(stored.nodes["x"].replicas) == 1
    dropped, _ = grow(stored, {"a": {"x": 0.9, "p": 0.5}}, replace=True)  # and dropping it splits them again
    assert {"a", "b", "x"} <= dropped.affected and len(stored.nodes["x"].replicas) == 2

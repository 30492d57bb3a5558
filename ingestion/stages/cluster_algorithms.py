"""The incremental overlapping clustering behind the ``clusters`` stage, as pure functions.

Nothing here touches a store: the stage loads the part of one level's network
it needs, hands it to these functions, and writes back what they return. That
keeps the algorithm testable on small hand-made graphs and makes its cost
visible: every function works on the *affected* part of a level only.

One level of the hierarchy is a weighted, undirected network (chunks linked by
``SIMILAR`` at level 0, clusters at the levels above). Three steps turn a
change of that network into a change of the next level's clusters:

1. **Edge scores** (:func:`edge_score`, :func:`top_neighbours`): a new node
   links to its top-k nodes by ``s = α·cos + (1-α)·exp(-(i-j)²/2σ²)`` above θ,
   the position term only between chunks of one document.
2. **Ego-network disentanglement** (:func:`ego_components`,
   :func:`replicate`): a node gets one *replica* per connected component of its
   ego network (its neighbours and the edges among them, without the node), so
   a node that bridges unrelated contexts can sit in one cluster per context.
   Every edge (u, v) becomes exactly one replica edge: u's replica whose
   component holds v, to v's replica whose component holds u. A re-replicated
   node keeps the labels of its old replicas by best overlap of components, so
   clusters keep their identity while they grow.
3. **Incremental label propagation** (:func:`propagate_labels`): new replicas
   start with fresh labels, existing ones keep theirs; replicas on a work list
   take the label with the largest summed edge weight among their replica
   neighbours, and a replica whose label changes puts its neighbours on the
   list, until nothing changes or a round cap is reached.

A label is the id of the cluster one level up that groups the nodes carrying it.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import networkx as nx

#: Replicas of a node are ``<node id>~r<n>``; the separator never occurs in chunk or cluster ids.
REPLICA_SEPARATOR = "~r"


# ----------------------------------------------------------------------------- edge scores


def edge_score(cosine: float, same_document: bool, distance: int, alpha: float, sigma: float) -> float:
    """CAM's link score: semantic similarity plus, within one document, positional proximity.

    Across documents (and between clusters) positions mean nothing, so the
    proximity term is 0 there, as the method prescribes.
    """
    proximity = math.exp(-(distance**2) / (2.0 * sigma**2)) if same_document else 0.0
    return alpha * cosine + (1.0 - alpha) * proximity


def top_neighbours(node_id: str, scored: Mapping[str, float], k: int, theta: float) -> dict[str, float]:
    """The ``k`` best-scoring other nodes above ``theta`` (ties broken by id, for reproducible graphs)."""
    ranked = sorted(((s, other) for other, s in scored.items() if other != node_id and s >= theta),
                    key=lambda item: (-item[0], item[1]))  # fmt: skip
    return {other: s for s, other in ranked[:k]}


# ----------------------------------------------------------------------------- network state


@dataclass
class Replica:
    """One replica of a node: the component of its ego network it stands for, and its label."""

    id: str
    node_id: str
    label: str
    members: frozenset[str]  # the neighbours in this replica's ego-network component


@dataclass
class NodeState:
    """What the clustering knows about one node of a level: its weighted neighbours and replicas."""

    node_id: str
    neighbours: dict[str, float] = field(default_factory=dict)
    replicas: list[Replica] = field(default_factory=list)

    def replica_towards(self, neighbour: str) -> Replica | None:
        """The replica whose component holds ``neighbour`` (the end of the replica edge for that link)."""
        for replica in self.replicas:
            if neighbour in replica.members:
                return replica
        return None

    def labels(self) -> frozenset[str]:
        return frozenset(r.label for r in self.replicas)


StateLoader = Callable[[Iterable[str]], Mapping[str, NodeState]]

#: Replicas as a comparable value: (replica id, label, members) of each.
ReplicaSignature = frozenset[tuple[str, str, frozenset[str]]]


def replica_signature(replicas: Iterable[Replica]) -> ReplicaSignature:
    """What a node's replicas amount to when stored, whatever their order."""
    return frozenset((r.id, r.label, r.members) for r in replicas)


class LevelView:
    """The loaded part of one level's network, extended on demand through ``loader``.

    The stage's loader reads node states from Neo4j in one query per call;
    tests pass a dictionary lookup. Nodes the loader does not know are absent
    from the level (deleted, or never linked).
    """

    def __init__(self, loader: StateLoader) -> None:
        self.loader = loader
        self.nodes: dict[str, NodeState] = {}
        #: Each node's labels as stored before this growth step (empty for nodes new to the level).
        self.stored_labels: dict[str, frozenset[str]] = {}
        #: Each loaded node's replicas as stored before this growth step (absent for nodes new to it).
        self.stored_replicas: dict[str, ReplicaSignature] = {}
        self._asked: set[str] = set()

    def ensure(self, node_ids: Iterable[str]) -> None:
        missing = [n for n in dict.fromkeys(node_ids) if n not in self._asked]
        if not missing:
            return
        self._asked.update(missing)
        for node_id, state in self.loader(missing).items():
            if node_id not in self.nodes:
                self.nodes[node_id] = state
                self.stored_labels[node_id] = state.labels()
                self.stored_replicas[node_id] = replica_signature(state.replicas)

    def state(self, node_id: str) -> NodeState:
        """The node's state (loaded if need be), created empty for a node new to the level."""
        self.ensure([node_id])
        if node_id not in self.nodes:
            self.nodes[node_id] = NodeState(node_id)
            self.stored_labels.setdefault(node_id, frozenset())
        return self.nodes[node_id]

    def replicas_changed(self, node_id: str) -> bool:
        """Whether the node's replicas differ from those stored (always, for a node new to the level):
        an affected node often ends up with the replicas it had, and those need no rewrite."""
        stored = self.stored_replicas.get(node_id)
        return stored is None or replica_signature(self.state(node_id).replicas) != stored

    def neighbours(self, node_id: str) -> dict[str, float]:
        node = self.nodes.get(node_id)
        return node.neighbours if node is not None else {}

    def link(self, a: str, b: str, weight: float) -> None:
        """Add (or reweight) the undirected edge a–b."""
        self.state(a).neighbours[b] = weight
        self.state(b).neighbours[a] = weight

    def unlink(self, a: str, b: str) -> None:
        for x, y in ((a, b), (b, a)):
            node = self.nodes.get(x)
            if node is not None:
                node.neighbours.pop(y, None)

    def remove(self, node_id: str) -> NodeState | None:
        """Take a node out of the level with all its edges; returns its last state."""
        node = self.nodes.pop(node_id, None)
        if node is not None:
            for other in list(node.neighbours):
                self.unlink(node_id, other)
        return node


# ----------------------------------------------------------------------------- disentanglement


def ego_components(view: LevelView, node_id: str) -> list[frozenset[str]]:
    """Connected components of the node's ego network (its neighbours and the edges among them).

    Ordered by their smallest member so replica numbering is reproducible.
    """
    neighbours = set(view.neighbours(node_id))
    ego = nx.Graph()
    ego.add_nodes_from(neighbours)
    for u in neighbours:
        ego.add_edges_from((u, w) for w in view.neighbours(u) if w in neighbours and w != node_id)
    return sorted((frozenset(c) for c in nx.connected_components(ego)), key=min)


def fresh_label(replica_id: str, token: str, level: int) -> str:
    """A new cluster id for the level above: unique per (replica, growth step), reproducible."""
    digest = hashlib.sha1(f"{replica_id}|{token}".encode()).hexdigest()[:16]
    return f"c{level + 1}-{digest}"


def replicate(
    node_id: str,
    components: Sequence[frozenset[str]],
    old: Sequence[Replica],
    new_label: Callable[[str], str],
) -> list[Replica]:
    """One replica per component; each inherits the label of the old replica it overlaps most.

    Matching is greedy by overlap (largest first, ties by ids) and one-to-one,
    so a component that split keeps its label on its larger part and the
    other part starts a new cluster. A node whose ego network is empty (no
    neighbours) still gets one replica, so every node belongs to some cluster;
    it keeps its first old label, and an isolated node's label passes on to
    its largest component once it gains neighbours.
    """
    parts = list(components) or [frozenset()]
    pairs = sorted(
        ((len(part & r.members), i, j) for i, part in enumerate(parts) for j, r in enumerate(old)),
        key=lambda t: (-t[0], t[1], t[2]),
    )
    label_of: dict[int, str] = {}
    used: set[int] = set()
    for overlap, i, j in pairs:
        if overlap == 0 or i in label_of or j in used:
            continue
        label_of[i] = old[j].label
        used.add(j)
    # A node that had no neighbours stands for one context: when it gains some,
    # its cluster continues with them (otherwise every isolated chunk a batch
    # links to would dissolve its cluster and start a new one).
    lonely = [r.label for j, r in enumerate(old) if j not in used and not r.members]
    for i in sorted((i for i in range(len(parts)) if i not in label_of), key=lambda i: (-len(parts[i]), i)):
        if not lonely:
            break
        label_of[i] = lonely.pop(0)
    if not components and old and 0 not in label_of:
        label_of[0] = old[0].label  # an isolated node stays in one of its clusters
    replicas = []
    for i, part in enumerate(parts):
        replica_id = f"{node_id}{REPLICA_SEPARATOR}{i}"
        replicas.append(Replica(replica_id, node_id, label_of.get(i) or new_label(replica_id), part))
    return replicas


# ----------------------------------------------------------------------------- label propagation


@dataclass
class PropagationResult:
    rounds: int
    relabelled: set[str]  # node ids with a replica whose label changed during propagation
    converged: bool


def replica_neighbours(view: LevelView, replica: Replica) -> list[tuple[Replica, float]]:
    """The replica edges of ``replica``: for each member u, u's replica that holds the replica's node."""
    out = []
    node = view.nodes.get(replica.node_id)
    for member in sorted(replica.members):
        other = view.nodes.get(member)
        if other is None or node is None:
            continue
        target = other.replica_towards(replica.node_id)
        if target is not None:
            out.append((target, node.neighbours.get(member, 0.0)))
    return out


def majority_label(replica: Replica, neighbours: Sequence[tuple[Replica, float]]) -> str:
    """The label with the largest summed weight; the current label wins ties, then the smallest label."""
    if not neighbours:
        return replica.label
    weight: dict[str, float] = defaultdict(float)
    for other, w in neighbours:
        weight[other.label] += w
    best = max(weight.values())
    if weight.get(replica.label, -1.0) >= best - 1e-12:
        return replica.label
    return min(label for label, w in weight.items() if w >= best - 1e-12)


def propagate_labels(
    view: LevelView, work: Iterable[Replica], max_rounds: int, fresh: Collection[str] = ()
) -> PropagationResult:
    """Incremental label propagation from ``work`` over the replica network.

    Each round visits the work list with the replicas still carrying a
    ``fresh`` label (born in this growth step) first, then the others, each
    part in id order. Updates are asynchronous, so a new replica joins the
    cluster around it before its established neighbours look at it; an
    established replica whose only new neighbour carries a fresh label would
    otherwise take that label and dissolve its own cluster. The neighbours of
    every replica that changed form the next work list. Nodes outside the
    loaded view are loaded before each round, so a ripple can travel as far as
    it needs to, up to ``max_rounds``.
    """
    current = {r.id: r for r in work}
    relabelled: set[str] = set()
    for round_number in range(1, max_rounds + 1):
        if not current:
            return PropagationResult(round_number - 1, relabelled, True)
        view.ensure(m for r in current.values() for m in r.members)
        changed: list[Replica] = []
        for replica_id in sorted(current, key=lambda rid: (current[rid].label not in fresh, rid)):
            replica = current[replica_id]
            label = majority_label(replica, replica_neighbours(view, replica))
            if label != replica.label:
                replica.label = label
                changed.append(replica)
                relabelled.add(replica.node_id)
        view.ensure(m for r in changed for m in r.members)
        current = {n.id: n for r in changed for n, _ in replica_neighbours(view, r)}
    return PropagationResult(max_rounds, relabelled, not current)


# ----------------------------------------------------------------------------- one level, end to end


@dataclass
class LevelChange:
    """What one level's update did, for the stage to write and to carry one level up."""

    affected: set[str]  # nodes whose replicas were recomputed or relabelled (their rows are rewritten)
    removed: set[str]  # nodes taken out of the level
    added_to: dict[str, set[str]]  # label -> nodes that joined that label's group
    left: dict[str, set[str]]  # label -> nodes that left it
    propagation: PropagationResult
    linked: set[str] = field(
        default_factory=set
    )  # nodes (staying) whose links were added, dropped or reweighted

    @property
    def changed_labels(self) -> set[str]:
        return set(self.added_to) | set(self.left)


def update_level(
    view: LevelView,
    new_edges: Mapping[str, Mapping[str, float]],
    removed: Iterable[str],
    *,
    token: str,
    level: int,
    max_rounds: int,
    replace_edges: bool = False,
) -> LevelChange:
    """Apply one growth step to a level: edge changes, re-replication of affected nodes, propagation.

    ``new_edges`` maps each *dirty* node (new, or whose content changed) to its
    fresh links; with ``replace_edges`` they replace the node's old links (a
    cluster whose members changed is re-linked; a chunk never changes, so its
    links only accumulate). ``removed`` nodes leave the level.

    Affected nodes (re-replicated, and where propagation starts) are exactly
    those whose ego network or link weights can have changed: the dirty nodes,
    both ends of every link added, dropped or reweighted, the neighbours of
    removed nodes, and the common neighbours of the two ends of a link added or
    dropped (the link joins or splits components of their ego networks). A
    re-linked cluster whose links came out the same touches nobody else, which
    keeps a batch from rippling through a whole level.
    """
    removed = set(removed)
    dirty = set(new_edges) - removed
    view.ensure(dirty | removed | {n for links in new_edges.values() for n in links})
    view.ensure(n for node_id in dirty | removed for n in view.neighbours(node_id))  # before any link changes
    affected: set[str] = set(dirty)
    linked: set[str] = set()
    for node_id in sorted(removed):
        state = view.remove(node_id)
        if state is not None:
            affected.update(state.neighbours)
            linked.update(state.neighbours)
    toggled: set[tuple[str, str]] = set()  # links added or dropped between two nodes that stay
    for node_id in sorted(dirty):
        state = view.state(node_id)
        old = dict(state.neighbours)
        new = {o: w for o, w in new_edges[node_id].items() if o not in removed and o != node_id}
        if replace_edges:
            for other in sorted(old.keys() - new.keys()):
                view.unlink(node_id, other)
                linked.update((node_id, other))
                toggled.add((node_id, other))
        for other, weight in new.items():
            if other not in old:
                toggled.add((node_id, other))
            elif old[other] == weight:
                continue
            view.link(node_id, other, weight)
            linked.update((node_id, other))
    affected |= linked
    view.ensure(n for pair in toggled for node_id in pair for n in view.neighbours(node_id))
    for a, b in toggled:
        affected.update(set(view.neighbours(a)) & set(view.neighbours(b)))
    affected -= removed
    # Ego networks of affected nodes read their neighbours' links; replica edges read their replicas.
    view.ensure(n for a in affected for n in view.neighbours(a))
    minted: set[str] = set()

    def mint(replica_id: str) -> str:
        label = fresh_label(replica_id, token, level)
        minted.add(label)
        return label

    for node_id in sorted(affected):
        state = view.state(node_id)
        state.replicas = replicate(node_id, ego_components(view, node_id), state.replicas, mint)
    work = {r.id: r for a in affected for r in view.state(a).replicas}
    for a in sorted(affected):
        for replica in view.state(a).replicas:
            for neighbour, _ in replica_neighbours(view, replica):
                work.setdefault(neighbour.id, neighbour)
    propagation = propagate_labels(view, work.values(), max_rounds, fresh=minted)
    touched = affected | propagation.relabelled
    added_to: dict[str, set[str]] = defaultdict(set)
    left: dict[str, set[str]] = defaultdict(set)
    for node_id in touched:
        old, new = view.stored_labels.get(node_id, frozenset()), view.state(node_id).labels()
        for label in new - old:
            added_to[label].add(node_id)
        for label in old - new:
            left[label].add(node_id)
    for node_id in removed:
        for label in view.stored_labels.get(node_id, frozenset()):
            left[label].add(node_id)
    return LevelChange(touched, removed, dict(added_to), dict(left), propagation, linked - removed)


def group_members(
    stored: Mapping[str, Iterable[str]], change: LevelChange, labels: Iterable[str]
) -> dict[str, set[str]]:
    """Each label's member nodes after ``change``: the stored group minus leavers plus joiners."""
    out = {}
    for label in labels:
        members = set(stored.get(label, ())) - change.left.get(label, set()) - change.removed
        out[label] = members | change.added_to.get(label, set())
    return out


def inter_cluster_links(view: LevelView, groups: Mapping[str, Iterable[str]]) -> dict[str, dict[str, float]]:
    """Each cluster's links to the other clusters of its level: the replica edges that cross them.

    ``view`` is the level below (its nodes carry the cluster labels on their
    replicas), ``groups`` the members of the clusters to link. Every link
    (u, v) of the level below is one replica edge, from u's replica whose
    ego-network component holds v to v's replica that holds u; when those two
    replicas carry different labels A and B, the edge connects clusters A and
    B (CAM's inter-cluster connections). A–B weighs the summed weight of its
    crossing edges. A node in two clusters does not link them by itself: each
    of its replicas stands for one context, and only edges leaving a context
    for another cluster connect. Every edge crosses at most one pair, so the
    level above is never denser than the level below, and A–B weighs the same
    whether it is computed from A or from B, so relinking only the clusters
    that changed keeps the level's network consistent.
    """
    groups = {label: list(members) for label, members in groups.items()}
    view.ensure(m for members in groups.values() for m in members)
    view.ensure(n for members in groups.values() for m in members for n in view.neighbours(m))
    out: dict[str, dict[str, float]] = {}
    for label, members in groups.items():
        weights: dict[str, float] = defaultdict(float)
        for member in members:
            state = view.state(member)
            for other, weight in state.neighbours.items():
                mine = state.replica_towards(other)
                if mine is None or mine.label != label:
                    continue  # the edge leaves another of the member's contexts
                theirs = view.state(other).replica_towards(member)
                if theirs is not None and theirs.label != label:
                    weights[theirs.label] += weight
        out[label] = dict(weights)
    return out


def growth_token(level: int, dirty: Iterable[str], removed: Iterable[str]) -> str:
    """A reproducible id for one growth step of one level (seeds the fresh labels it makes)."""
    digest = hashlib.sha1()
    digest.update(str(level).encode())
    for part in sorted(dirty):
        digest.update(b"+" + part.encode())
    for part in sorted(removed):
        digest.update(b"-" + part.encode())
    return digest.hexdigest()[:16]

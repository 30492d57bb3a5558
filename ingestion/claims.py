"""Who may write a document: claims that keep writers sharing one Neo4j from doing the same work.

Several ``engramdb serve`` processes (or CLI ingests with a Qdrant server) may
share one Neo4j and be handed the same input at once. Each document is claimed
in one transaction (``cypher/writers/claim_documents``) before it is extracted:
the first writer to lock the node gets it, the others see ``busy`` and wait for
it to finish, then find it ``done``. So every document is extracted and written
by exactly one writer, and each records who that was (``Document.ingested_by``).

A claim is a lease on the Neo4j server's clock, renewed as a document's parts
land and released with its status (or given up when an ingest stops on an
error). A writer that dies holds its claims until the lease runs out, unless
another writer can see that it is gone: a holder on this host whose process no
longer runs (a killed server, an interrupted CLI ingest) is taken over at once.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from engramdb.ingestion.documents import Document
from engramdb.platform.graph import Graph
from engramdb.platform.processes import pid_alive

#: How long a claim holds without renewal: past a part's extraction with a slow model.
DEFAULT_LEASE_SECONDS = 900.0


def new_writer_id() -> str:
    """``host/pid/run``: where the writer runs (so a peer on the same host can check it still does)
    and a run token (so two ingestors of one process are still told apart in the graph)."""
    return f"{socket.gethostname()}/{os.getpid()}/{uuid.uuid4().hex[:8]}"


def holder_is_gone(holder: str) -> bool:
    """Whether a claim's holder can be seen to have stopped: a process of this host that no longer runs.

    A holder on another host is never judged from here: only its lease ends its claim."""
    host, _, rest = holder.partition("/")
    pid_text = rest.partition("/")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    return not pid_alive(int(pid_text))


@dataclass
class ClaimRound:
    """One claim call's outcome, split by what the ingest does next with each document."""

    claimed: list[Document] = field(default_factory=list)  # ours: extract and write
    finished: list[Document] = field(default_factory=list)  # done by someone (maybe another writer)
    busy: list[Document] = field(default_factory=list)  # another live writer's: wait for it
    has_memory: set[str] = field(default_factory=set)  # claimed ids an earlier run left memory for
    prior_hashes: dict[str, str | None] = field(default_factory=dict)  # claimed id -> stored hash
    holders: dict[str, str] = field(default_factory=dict)  # busy id -> its holder


class DocumentClaims:
    """One writer's claims in one namespace."""

    def __init__(
        self, graph: Graph, ingest_version: str, lease_seconds: float = DEFAULT_LEASE_SECONDS
    ) -> None:
        if lease_seconds <= 0:
            raise ValueError(f"a claim's lease must be positive, got {lease_seconds}")
        self.graph = graph
        self.ingest_version = ingest_version
        self.lease_ms = int(lease_seconds * 1000)
        self.writer = new_writer_id()

    def claim(self, documents: Sequence[Document], known_holders: Iterable[str] = ()) -> ClaimRound:
        """Claim ``documents``; holders in ``known_holders`` that are gone are taken over."""
        takeover = sorted({h for h in known_holders if h and h != self.writer and holder_is_gone(h)})
        rows = [{"id": d.id, "title": d.title, "source": d.source, "content_hash": d.content_hash}
                for d in documents]  # fmt: skip
        by_id = {d.id: d for d in documents}
        result = ClaimRound()
        for row in self.graph.write("writers/claim_documents", rows=rows, writer=self.writer,
                                    lease_ms=self.lease_ms, ingest_version=self.ingest_version,
                                    takeover=takeover):  # fmt: skip
            doc = by_id[row["id"]]
            if row["outcome"] == "done":
                result.finished.append(doc)
            elif row["outcome"] == "busy":
                result.busy.append(doc)
                result.holders[doc.id] = row["holder"]
            else:
                result.claimed.append(doc)
                result.prior_hashes[doc.id] = row["content_hash"]
                if row["has_memory"]:
                    result.has_memory.add(doc.id)
        return result

    def renew(self, doc_ids: Sequence[str]) -> None:
        if doc_ids:
            self.graph.write(
                "writers/renew_claims", ids=list(doc_ids), writer=self.writer, lease_ms=self.lease_ms
            )

    def release(self, doc_ids: Sequence[str]) -> None:
        if doc_ids:
            self.graph.write("writers/release_claims", ids=list(doc_ids), writer=self.writer)

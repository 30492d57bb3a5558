"""The Neo4j side of memory: one driver, named queries, one namespace.

`Graph` is the only place that talks Bolt. Queries are looked up by name in
``cypher/`` and always get the namespace as the ``$namespace`` parameter, so a
query cannot forget it and user text never becomes Cypher source.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, LiteralString, cast

from neo4j import Driver, GraphDatabase, ManagedTransaction, Query, Record
from neo4j.exceptions import AuthError, ServiceUnavailable

from engramdb.platform import cypher_files
from engramdb.platform.config import Settings, validate_namespace
from engramdb.platform.errors import ConfigError, EngramError
from engramdb.platform.neo4j_server import LocalNeo4j

# Server notifications (e.g. "property key does not exist" on an empty graph) are
# noise for engramdb's own queries; errors still raise.
DRIVER_OPTIONS: dict[str, Any] = {"notifications_min_severity": "OFF"}
SCHEMA_FILES = ("schema/migrations", "schema/constraints", "schema/indexes")

log = logging.getLogger("engramdb")
#: A log record carrying this attribute is something a command-line user must see (the CLI
#: prints it as a `note:`); the SDK leaves it to the application's logging configuration.
NOTICE = "engramdb_notice"


def connect(settings: Settings) -> Driver:
    """A driver for the configured Neo4j: external if a URI is set, else the local server
    (started if none runs and ``neo4j_autostart`` allows it)."""
    if settings.neo4j_uri:
        password = settings.neo4j_password.get_secret_value() if settings.neo4j_password else ""
        driver = GraphDatabase.driver(
            settings.neo4j_uri, auth=(settings.neo4j_user, password), **DRIVER_OPTIONS
        )
        where = settings.neo4j_uri
    else:
        server = _running_local_server(settings)
        driver = GraphDatabase.driver(server.bolt_uri, auth=("neo4j", server.password()), **DRIVER_OPTIONS)
        where = server.bolt_uri
    try:
        driver.verify_connectivity()
    except AuthError as exc:
        driver.close()
        raise EngramError(f"Neo4j at {where} rejected the credentials: {exc.message}") from exc
    except (ServiceUnavailable, OSError) as exc:
        driver.close()
        raise EngramError(f"cannot reach Neo4j at {where}: {exc}") from exc
    return driver


def _running_local_server(settings: Settings) -> LocalNeo4j:
    """The local server, ready for Bolt; started here only if autostart is on.

    Starting a server is a side effect that outlives the program (it keeps
    running, holding memory and ports), so it is a setting and is logged.
    """
    server = LocalNeo4j(settings)
    if server.pid() is not None:
        server.start()  # already running: waits until Bolt answers
        return server
    if not settings.neo4j_autostart:
        raise ConfigError(
            f"no local Neo4j is running (data home {settings.home}, {server.bolt_uri}) and neo4j_autostart "
            "is off: start it with `engramdb neo4j start`, or set ENGRAMDB_NEO4J_AUTOSTART=true"
        )
    server.start()
    # Marked as a notice: the CLI shows such records as one `note:` line (the SDK only logs them).
    log.info("started the local Neo4j at %s; it keeps running until `engramdb neo4j stop`", server.bolt_uri,
             extra={NOTICE: True})  # fmt: skip
    return server


def _q(text: str) -> Query:
    # Query text comes only from our own .cypher files, never from user input.
    return Query(cast(LiteralString, text))


def version_token(epoch: object, version: object) -> str:
    """The memory version as :meth:`Graph.memory_version` spells it, from a row that read the
    ``MemoryVersion`` node itself (a query that returns it beside its own rows, in one transaction)."""
    return f"{epoch}:{version}"


class Graph:
    """Named, parameterized Cypher against one database and one namespace."""

    def __init__(self, driver: Driver, namespace: str, database: str = "neo4j") -> None:
        self.driver = driver
        self.namespace = validate_namespace(namespace)
        self.database = database

    def with_namespace(self, namespace: str) -> Graph:
        return Graph(self.driver, namespace, self.database)

    def read(self, name: str, **params: Any) -> list[dict[str, Any]]:
        """Run a read query from ``cypher/`` and return its rows as dicts."""
        text = cypher_files.query(name)
        with self.driver.session(database=self.database) as session:
            return session.execute_read(self._rows, text, {**params, "namespace": self.namespace})

    def memory_version(self) -> str:
        """A token that changes whenever any process ingests or deletes a document of this namespace.

        Read from one node (``traversals/memory_version``) that the document writers bump in their
        own transactions, so checking it costs one index seek however large the namespace is: what a
        cache of something derived from the whole memory compares before each use.
        """
        row = self.read("traversals/memory_version")[0]
        return version_token(row["epoch"], row["version"])

    def write(self, name: str, **params: Any) -> list[dict[str, Any]]:
        """Run a write query in its own transaction."""
        text = cypher_files.query(name)
        with self.driver.session(database=self.database) as session:
            return session.execute_write(self._rows, text, {**params, "namespace": self.namespace})

    def write_many(
        self,
        steps: Sequence[tuple[str, Mapping[str, Any]]],
        before_commit: Callable[[], None] | None = None,
    ) -> list[list[dict[str, Any]]]:
        """Run several write queries in ONE transaction: all of them land, or none.

        ``before_commit`` runs after the queries and before the commit (its error rolls them back):
        what must be stored elsewhere before the graph may point at it, done while the transaction
        is open rather than before it starts. It must be idempotent: a retried transaction runs it
        again."""
        texts = [
            (cypher_files.query(name), {**params, "namespace": self.namespace}) for name, params in steps
        ]

        def work(tx: ManagedTransaction) -> list[list[dict[str, Any]]]:
            rows = [self._rows(tx, text, params) for text, params in texts]
            if before_commit is not None:
                before_commit()
            return rows

        with self.driver.session(database=self.database) as session:
            return session.execute_write(work)

    @staticmethod
    def _rows(tx: ManagedTransaction, text: str, params: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The rows as dicts of the values the driver decoded.

        Not ``Record.data()``: it rebuilds every nested list on its way to turning nodes and
        relationships into dicts, 35 times the cost of pairing keys with values on a page of node
        states, and our queries return plain values, never a node, relationship or path
        (the test suite's ``conftest.py`` compares the two for every row any test reads)."""
        result = tx.run(cast(LiteralString, text), params)
        keys = result.keys()
        return [row_dict(keys, record) for record in result]


def row_dict(keys: Sequence[str], record: Record) -> dict[str, Any]:
    """One row as a dict of the values the driver decoded (see :meth:`Graph._rows`)."""
    return dict(zip(keys, record, strict=True))


def apply_schema(driver: Driver, database: str = "neo4j") -> int:
    """Create constraints and indexes if missing (idempotent); returns statements run."""
    count = 0
    with driver.session(database=database) as session:
        for name in SCHEMA_FILES:
            for statement in cypher_files.statements(name):
                session.run(_q(statement)).consume()
                count += 1
    return count

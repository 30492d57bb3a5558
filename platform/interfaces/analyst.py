"""Run an analyst's Cypher safely: read-only, bounded in rows and time, parameters never spliced.

``engramdb cypher`` hands whatever an analyst types to Neo4j, so the guarantees
come from the server, not from inspecting text:

* the query runs in a **read** transaction (Bolt access mode READ), which Neo4j
  itself refuses to write in, and the transaction is **rolled back**, never
  committed;
* it has a **server-side transaction timeout**: past it Neo4j terminates the
  transaction (and the query with it) instead of the client merely giving up;
* at most ``limit`` rows are pulled; the rest is never streamed.

Read mode does not cover everything an analyst should not do, though: a read
transaction still runs ``LOAD CSV`` (which reads files and URLs on the server),
``CALL dbms…`` procedures, ``SHOW USERS`` and ``TERMINATE TRANSACTIONS``. So
before running, the query is planned with ``EXPLAIN`` (nothing executes) and
refused when the server says it writes (query type ``w``/``rw``), changes the
schema or administers the DBMS (``s``), or when its plan holds ``LOAD CSV``, an
administration operator, or a procedure outside :data:`READ_PROCEDURES`. A
lexical scan runs first for the same cases, only so the refusal can name the
clause the analyst wrote (``MERGE``, ``CREATE INDEX``, ``CALL dbms.listConfig``).

Example queries live in ``cypher/examples/``: a one-line description, then one
``// :param NAME => VALUE`` line per parameter (Browser's own syntax, so the
lines can be pasted into Neo4j Browser), then the query.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, LiteralString, cast

from neo4j import READ_ACCESS, Driver
from neo4j.exceptions import Neo4jError

from engramdb.platform.config import DEFAULT_CYPHER_MAX_TIMEOUT
from engramdb.platform.cypher_files import CYPHER_DIR
from engramdb.platform.errors import EngramError, InputError
from engramdb.platform.text_safety import unicode_problem

EXAMPLES_DIR = CYPHER_DIR / "examples"
PARAM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEADER_PARAM = re.compile(r"^//\s*:param\s+([A-Za-z_][A-Za-z0-9_]*)\s*=>\s*(.+?)\s*$")
#: Procedures an analyst may CALL: schema introspection and the index searches. Everything else
#: (``dbms.*``, ``db.stats.*``, ``db.create*``, ``db.clearQueryCaches`` ...) is refused.
READ_PROCEDURES = (
    "db.labels",
    "db.relationshipTypes",
    "db.propertyKeys",
    "db.schema.visualization",
    "db.schema.nodeTypeProperties",
    "db.schema.relTypeProperties",
    "db.index.fulltext.queryNodes",
    "db.index.fulltext.queryRelationships",
    "db.index.vector.queryNodes",
    "db.index.vector.queryRelationships",
    "db.ping",
)
#: SHOW commands that only describe this database's schema and code; other SHOWs are administration.
SHOW_ALLOWED = ("INDEX", "INDEXES", "CONSTRAINT", "CONSTRAINTS", "PROCEDURE", "PROCEDURES", "FUNCTION",
                "FUNCTIONS", "ALL", "RANGE", "TEXT", "POINT", "LOOKUP", "FULLTEXT", "VECTOR", "UNIQUE",
                "EXIST", "EXISTENCE", "KEY", "NODE", "RELATIONSHIP", "REL", "PROPERTY", "BUILT")  # fmt: skip
#: Plan operators of administration commands that a read transaction would still run.
ADMIN_OPERATORS = ("AdministrationCommand", "TerminateTransactions", "ShowTransactions", "ShowSettings",
                   "ShowServers", "ShowDatabase", "ShowUsers", "ShowRoles", "ShowPrivileges", "ShowAliases",
                   "SystemProcedureCall")  # fmt: skip
#: Write clauses, most specific first, for naming what was refused.
WRITE_CLAUSES = ("DETACH DELETE", "ON CREATE SET", "ON MATCH SET", "CREATE", "MERGE", "DELETE", "SET",
                 "REMOVE", "FOREACH")  # fmt: skip
_SCHEMA = re.compile(
    r"\b(CREATE|DROP)\s+(OR\s+REPLACE\s+)?((RANGE|TEXT|POINT|LOOKUP|FULLTEXT|VECTOR|BTREE)\s+)?"
    r"(INDEX|CONSTRAINT)\b"
)
_ADMIN_START = re.compile(
    r"^(GRANT|DENY|REVOKE|ALTER|RENAME|START|STOP|ENABLE|DEALLOCATE|DRYRUN|REALLOCATE|TERMINATE)\b"
    r"|^(CREATE|DROP)\s+(OR\s+REPLACE\s+)?(USER|ROLE|DATABASE|COMPOSITE|ALIAS|SERVER)\b"
)


class QueryRefused(EngramError):
    """The analyst's query would write, change the schema, administer the DBMS or read server files."""


class QueryTimedOut(EngramError):
    """The server stopped the query at its transaction timeout."""


@dataclass(frozen=True)
class Example:
    """One catalogued query: ``cypher/examples/<name>.cypher``."""

    name: str
    description: str
    params: dict[str, str]  # name -> example value as written in the header (Cypher literal)
    text: str  # the whole file, header comments included (Neo4j ignores them)


@dataclass
class CypherResult:
    """What a query returned: column names, at most ``limit`` rows, and whether more were left unread."""

    columns: list[str]
    rows: list[dict[str, Any]]
    truncated: bool
    limit: int
    seconds: float
    example: str | None = None
    params: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: graph values become dicts (labels/type and properties), temporals ISO strings."""
        return {
            "columns": self.columns,
            "rows": [{k: to_jsonable(v) for k, v in row.items()} for row in self.rows],
            "row_count": len(self.rows),
            "truncated": self.truncated,
            "limit": self.limit,
            "seconds": round(self.seconds, 3),
            "example": self.example,
            "params": {k: to_jsonable(v) for k, v in self.params.items()},
        }


# --------------------------------------------------------------------------- catalogue


def parse_example(name: str, text: str) -> Example:
    """Read the header: the first comment line is the description, ``// :param`` lines the parameters."""
    lines = text.splitlines()
    if not lines or not lines[0].startswith("//"):
        raise InputError(f"example {name!r} has no one-line description in its first line")
    description = lines[0].removeprefix("//").strip()
    params: dict[str, str] = {}
    for line in lines[1:]:
        if not line.startswith("//"):
            break
        match = _HEADER_PARAM.match(line)
        if match:
            params[match.group(1)] = match.group(2)
    return Example(name=name, description=description, params=params, text=text)


def examples() -> list[Example]:
    """Every catalogued query, by name."""
    return [parse_example(p.stem, p.read_text()) for p in sorted(EXAMPLES_DIR.glob("*.cypher"))]


def example(name: str) -> Example:
    """One catalogued query; an unknown name lists the known ones."""
    found = {e.name: e for e in examples()}
    if name not in found:
        raise InputError(f"no example query {name!r}; known: {', '.join(found)} (`engramdb cypher --list`)")
    return found[name]


def example_params(entry: Example, given: Mapping[str, Any]) -> dict[str, Any]:
    """``given`` checked against the example's header: every parameter present, none unknown."""
    missing = [p for p in entry.params if p not in given]
    if missing:
        hints = " ".join(f"--param {p}={_shell_hint(entry.params[p])}" for p in missing)
        raise InputError(f"example {entry.name!r} needs {', '.join(missing)}: e.g. {hints}")
    unknown = [p for p in given if p not in entry.params]
    if unknown:
        takes = ", ".join(entry.params) or "no parameters"
        raise InputError(f"example {entry.name!r} takes {takes}, not {', '.join(unknown)}")
    return dict(given)


def _shell_hint(literal: str) -> str:
    """A Cypher literal from a header (``'Hank Snow'``) as a shell-quoted --param value."""
    if len(literal) >= 2 and literal[0] == literal[-1] and literal[0] in "'\"":
        return "'" + literal[1:-1].replace("'", "'\\''") + "'"
    return literal


# --------------------------------------------------------------------------- parameters


def parse_param_value(raw: str) -> Any:
    """JSON-ish: ``12`` → int, ``0.5`` → float, ``true`` → bool, ``[1, 2]`` → list, ``null`` → None,
    ``'"12"'`` → the string "12"; anything that is not JSON stays the string as typed."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def parse_params(assignments: Iterable[str]) -> dict[str, Any]:
    """``--param k=v`` values as query parameters (never spliced into the query text)."""
    params: dict[str, Any] = {}
    for item in assignments:
        name, sep, raw = item.partition("=")
        name = name.strip()
        if not sep or not PARAM_NAME.fullmatch(name):
            raise InputError(f"--param takes NAME=VALUE with NAME a Cypher parameter name, got {item!r}")
        if name == "namespace":
            raise InputError("$namespace is the memory namespace: choose it with -n NAMESPACE, not --param")
        if name in params:
            raise InputError(f"--param {name} is given twice")
        params[name] = parse_param_value(raw)
    return params


# --------------------------------------------------------------------------- refusal


def normalized(text: str) -> str:
    """The query with comments, string literals and quoted names blanked, upper-cased, one space apart.

    Keywords inside a string (``WHERE q.question CONTAINS 'create'``) must not count as clauses.
    """
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            out.append(" ")
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            out.append(" ")
        elif char in "'\"`":
            j = i + 1
            while j < n and text[j] != char:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            out.append(" _lit_ " if char != "`" else " _name_ ")
        else:
            out.append(char)
            i += 1
    return " ".join("".join(out).upper().split())


def refusal(text: str) -> str | None:
    """What a lexical scan finds that must not run, named as the analyst wrote it; None if nothing.

    Only the cases a read transaction would still execute are decided here (LOAD CSV, CALL dbms…,
    administration commands); writes and schema commands are named here but decided by the server.
    """
    flat = normalized(text)
    body = _strip_prefixes(flat)
    if re.search(r"\bLOAD\s+CSV\b", flat):
        return "LOAD CSV (it reads files and URLs on the database server)"
    procedure = re.search(r"\bCALL\s+(DBMS\.[A-Z0-9_.]*)", flat)
    if procedure:
        name = _original_case(text, procedure.group(1))
        return f"the admin procedure CALL {name} (CALL dbms… procedures administer the server)"
    show = re.match(r"^SHOW\s+(\w+)", body)
    if show and show.group(1) not in SHOW_ALLOWED:
        return f"an administration command (SHOW {show.group(1)})"
    if _ADMIN_START.match(body) or re.search(r"\bTERMINATE\s+TRANSACTIONS?\b", flat):
        words = " ".join(body.split()[:2])
        return f"an administration command ({words})"
    return None


def name_write(text: str) -> str:
    """The first write or schema clause the query contains, for the refusal message."""
    flat = normalized(text)
    schema = _SCHEMA.search(flat)
    if schema:
        return f"a schema command ({' '.join(schema.group(0).split())})"
    found = []
    for clause in WRITE_CLAUSES:
        match = re.search(r"(?<![.$\w])" + clause.replace(" ", r"\s+") + r"\b(?!\s*:)", flat)
        if match:
            found.append((match.start(), -len(clause), clause))
    return f"a write clause ({min(found)[2]})" if found else "a write"


def _strip_prefixes(flat: str) -> str:
    """``EXPLAIN``/``PROFILE``/``CYPHER 5 ...`` removed from the front of a normalized query."""
    previous = None
    while previous != flat:
        previous = flat
        flat = re.sub(r"^(EXPLAIN|PROFILE)\s+", "", flat)
        flat = re.sub(r"^CYPHER(\s+[\w.]+(\s*=\s*[\w.]+)?)*\s+(?=(MATCH|OPTIONAL|RETURN|CALL|WITH|UNWIND|SHOW"
                      r"|CREATE|MERGE|DROP|LOAD|USE|EXPLAIN|PROFILE|FOREACH|DELETE|DETACH|GRANT|DENY|REVOKE"
                      r"|ALTER|TERMINATE|START|STOP)\b)", "", flat)  # fmt: skip
    return flat


def _original_case(text: str, upper: str) -> str:
    """``DBMS.LISTCONFIG`` as the analyst spelled it (``dbms.listConfig``)."""
    found = re.search(re.escape(upper), text, re.IGNORECASE)
    return found.group(0) if found else upper.lower()


def _plan_refusal(plan: Mapping[str, Any] | None) -> str | None:
    """LOAD CSV, administration operators and non-allowlisted procedures in an EXPLAIN plan."""
    for operator in _operators(plan):
        kind = str(operator.get("operatorType", "")).split("@")[0]
        details = str((operator.get("args") or {}).get("Details") or "")
        if kind == "LoadCSV":
            return "LOAD CSV (it reads files and URLs on the database server)"
        if kind in ADMIN_OPERATORS:
            return f"an administration command ({kind})"
        if "ProcedureCall" in kind:
            name = details.split("(")[0].strip()
            if name.lower().startswith("dbms."):
                return f"the admin procedure CALL {name} (CALL dbms… procedures administer the server)"
            if name not in READ_PROCEDURES:
                return (f"the procedure CALL {name or '?'} (analysts may call: "
                        f"{', '.join(READ_PROCEDURES)})")  # fmt: skip
    return None


def _operators(plan: Mapping[str, Any] | None) -> Iterable[Mapping[str, Any]]:
    if not plan:
        return
    yield plan
    for child in plan.get("children") or ():
        yield from _operators(child)


# --------------------------------------------------------------------------- running


def run_cypher(
    driver: Driver,
    text: str,
    params: Mapping[str, Any],
    *,
    database: str = "neo4j",
    limit: int = 100,
    timeout: float = 30.0,
    max_timeout: float = DEFAULT_CYPHER_MAX_TIMEOUT,
    example_name: str | None = None,
) -> CypherResult:
    """Run ``text`` read-only with ``params``; at most ``limit`` rows, stopped by the server after ``timeout`` s.

    ``timeout`` above ``max_timeout`` (the ``cypher_max_timeout`` setting) is clamped to it (see
    :func:`bounded_timeout`). Raises :class:`QueryRefused` (nothing ran), :class:`QueryTimedOut`,
    or :class:`InputError` for bad input (text that is not Unicode, a timeout that is not a
    positive number) and for a query Neo4j rejects (syntax, a missing parameter).
    """
    check_unicode_input(text, params)
    query = text.strip().rstrip(";").strip()
    if not query or not normalized(query):
        raise InputError("the query is empty")
    if limit < 1:
        raise InputError(f"--limit must be at least 1, got {limit}")
    timeout = bounded_timeout(timeout, max_timeout)
    reason = refusal(query)
    if reason:
        raise QueryRefused(_refused(reason))
    parameters = dict(params)
    started = time.monotonic()
    with driver.session(
        database=database, default_access_mode=READ_ACCESS, fetch_size=min(limit + 1, 1000)
    ) as session:
        _check_plan(session, query, parameters, timeout)
        tx = session.begin_transaction(timeout=timeout)
        rows: list[dict[str, Any]] = []
        truncated = False
        try:
            result = tx.run(cast(LiteralString, query), parameters)
            columns = list(result.keys())
            for record in result:
                if len(rows) == limit:
                    truncated = True
                    break
                rows.append(dict(zip(columns, record.values(), strict=True)))
        except Neo4jError as exc:
            raise _mapped(exc, query, timeout) from exc
        finally:
            tx.close()  # never committed: rolled back
    return CypherResult(columns, rows, truncated, limit, time.monotonic() - started, example_name, parameters)


def bounded_timeout(timeout: float, maximum: float = DEFAULT_CYPHER_MAX_TIMEOUT) -> float:
    """``timeout`` in seconds, at most ``maximum``; :class:`InputError` unless finite and positive.

    Why check here and not only in the CLI: NaN compares false with everything, so it slips
    past a plain ``<= 0`` test and reaches the driver, which fails with a traceback; infinity
    and huge values would let one query hold a server transaction open indefinitely.
    """
    if not math.isfinite(timeout) or timeout <= 0:
        raise InputError(f"--timeout must be a finite number of seconds above 0, got {timeout:g}")
    return min(timeout, maximum)


def check_unicode_input(text: str, params: Mapping[str, Any]) -> None:
    """:class:`InputError` when the query or a string among the parameters is not valid Unicode.

    The driver cannot encode a lone surrogate (undecodable bytes carried by ``surrogateescape``)
    and would fail mid-send with a ``UnicodeEncodeError``; this names the query or parameter.
    """
    problem = unicode_problem(text, "the query")
    for name, value in params.items():
        problem = problem or _unicode_problem_in(value, f"the parameter ${name}")
    if problem:
        raise InputError(problem)


def _unicode_problem_in(value: Any, what: str) -> str | None:
    """The first string in ``value`` (nested lists and maps included) that is not valid Unicode."""
    if isinstance(value, str):
        return unicode_problem(value, what)
    if isinstance(value, Mapping):
        items: Iterable[Any] = [*value.keys(), *value.values()]
    elif isinstance(value, list | tuple):
        items = value
    else:
        return None
    for item in items:
        problem = _unicode_problem_in(item, what)
        if problem:
            return problem
    return None


def _check_plan(session: Any, query: str, params: Mapping[str, Any], timeout: float) -> None:
    """Plan the query (EXPLAIN executes nothing) and refuse by the server's own classification."""
    planned = _strip_leading_mode(query)
    tx = session.begin_transaction(timeout=timeout)
    try:
        summary = tx.run(cast(LiteralString, "EXPLAIN " + planned), dict(params)).consume()
    except Neo4jError as exc:
        raise _mapped(exc, query, timeout) from exc
    finally:
        tx.close()
    if summary.query_type in ("w", "rw"):
        raise QueryRefused(_refused(name_write(query)))
    reason = _plan_refusal(summary.plan)
    if reason:
        raise QueryRefused(_refused(reason))
    if summary.query_type == "s":
        named = name_write(query)
        raise QueryRefused(
            _refused(named if named.startswith("a schema") else "a schema or administration command")
        )


def _strip_leading_mode(query: str) -> str:
    """The query without a leading EXPLAIN/PROFILE (EXPLAIN is added for planning; two modes conflict)."""
    return re.sub(r"^\s*(EXPLAIN|PROFILE)\b", "", query, count=1, flags=re.IGNORECASE).strip()


def _refused(what: str) -> str:
    return f"refused {what}: `engramdb cypher` runs read-only queries; nothing was run or changed"


def _mapped(exc: Neo4jError, query: str, timeout: float) -> EngramError:
    """A server error as a message an analyst can act on."""
    code = exc.code or ""
    message = (exc.message or str(exc)).strip()
    if "TimedOut" in code or code.endswith("Transaction.Terminated"):
        return QueryTimedOut(
            f"the query was stopped by the server after {timeout:g} s (transaction timeout): narrow it "
            "(anchor the MATCH on an id or name, add LIMIT), or allow more with --timeout SECONDS"
        )
    if code.endswith("Statement.AccessMode"):
        return QueryRefused(_refused(name_write(query)))
    if code.endswith("ParameterMissing"):
        names = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", message.split(":", 1)[-1])
        hint = " ".join(f"--param {n}=VALUE" for n in names) or "--param NAME=VALUE"
        return InputError(f"the query uses parameters it was not given: pass {hint}")
    if code.endswith("SyntaxError"):
        return InputError(f"Cypher syntax error: {message}")
    return InputError(f"Neo4j rejected the query ({code}): {message}")


# --------------------------------------------------------------------------- values


def to_jsonable(value: Any) -> Any:
    """Nodes, relationships and paths as plain dicts; temporal and spatial values as strings/dicts."""
    from neo4j.graph import Node, Path, Relationship

    if isinstance(value, Node):
        return {"labels": sorted(value.labels), "properties": to_jsonable(dict(value)),
                "element_id": value.element_id}  # fmt: skip
    if isinstance(value, Relationship):
        return {
            "type": value.type,
            "properties": to_jsonable(dict(value)),
            "start": value.start_node.element_id if value.start_node else None,
            "end": value.end_node.element_id if value.end_node else None,
            "element_id": value.element_id,
        }
    if isinstance(value, Path):
        return {"nodes": [to_jsonable(n) for n in value.nodes],
                "relationships": [to_jsonable(r) for r in value.relationships]}  # fmt: skip
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if hasattr(value, "iso_format"):
        return value.iso_format()
    if hasattr(value, "srid"):
        return {"srid": value.srid, "coordinates": list(value)}
    return str(value)


def is_graph_value(value: Any) -> bool:
    """A node, relationship or path, or a non-empty list of only those."""
    from neo4j.graph import Node, Path, Relationship

    if isinstance(value, Node | Relationship | Path):
        return True
    return isinstance(value, list | tuple) and bool(value) and all(is_graph_value(v) for v in value)


def table_columns(result: CypherResult) -> tuple[list[str], list[str]]:
    """``(shown, hidden)``: a table shows the plain columns and hides graph columns when there are both.

    Why: catalogue queries return the graph for Neo4j Browser (``path``, nodes, edge lists) beside
    the same facts as text; in a terminal table the graph columns only repeat them, at length.
    A query that returns nothing but graph values is shown whole, as captions.
    """

    def graph_column(column: str) -> bool:
        values = [row[column] for row in result.rows if row[column] not in (None, [], ())]
        return bool(values) and all(is_graph_value(v) for v in values)

    hidden = [c for c in result.columns if graph_column(c)]
    if len(hidden) == len(result.columns):
        return list(result.columns), []
    return [c for c in result.columns if c not in hidden], hidden


def caption(value: Any) -> str:
    """A cell as text: graph values captioned the way the Browser style sheet captions them."""
    from neo4j.graph import Node, Path, Relationship

    if isinstance(value, Node):
        return f"({_node_caption(value)})"
    if isinstance(value, Relationship):
        return f"[{_relationship_caption(value)}]"
    if isinstance(value, Path):
        parts = [f"({_node_caption(value.start_node)})"]
        for before, rel, after in zip(value.nodes, value.relationships, value.nodes[1:], strict=False):
            label = _relationship_caption(rel)
            forward = rel.start_node is not None and rel.start_node.element_id == before.element_id
            parts.append(f"-[{label}]->" if forward else f"<-[{label}]-")
            parts.append(f"({_node_caption(after)})")
        return "".join(parts)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(caption(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return json.dumps(to_jsonable(value), ensure_ascii=False)
    if value is None:
        return ""
    if hasattr(value, "iso_format"):
        return value.iso_format()
    return str(value)


def _node_caption(node: Any) -> str:
    from engramdb.platform.browser_style import captions

    labels = sorted(node.labels)
    styles = captions()
    for label in labels:
        template = styles.get(f"node.{label}")
        if template:
            return f"{label}: {_interpolate(template, dict(node))}"
    shown = dict(node).get("name") or dict(node).get("id") or ""
    return f"{':'.join(labels)}: {shown}" if shown else ":".join(labels)


def _relationship_caption(rel: Any) -> str:
    from engramdb.platform.browser_style import captions

    template = captions().get(f"relationship.{rel.type}", "<type>")
    text = _interpolate(template, dict(rel)).replace("<type>", "")
    return f"{rel.type}: {text}" if text.strip() else rel.type


def _interpolate(template: str, properties: Mapping[str, Any]) -> str:
    """Browser's caption templating: ``{prop}`` becomes the property (lists joined by ", ")."""

    def value(match: re.Match[str]) -> str:
        found = properties.get(match.group(1))
        if isinstance(found, list | tuple):
            return ", ".join(map(str, found))
        return "" if found is None else str(found)

    return re.sub(r"\{([^{}]*)\}", value, template).strip()

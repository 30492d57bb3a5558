"""engramdb's Neo4j Browser style sheet (``cypher/browser/style.grass``), read the way the Browser reads it.

Why a port of the Browser's parser: Neo4j Browser 5 accepts GraSS through
``:style <text>``, a dropped file, or Browser's post-connect command, and its
parser is much smaller than CSS. It knows no comments (a ``/* ... */`` becomes
part of the next selector, and a ``:style`` inside one cuts the command short:
that is how the first style sheet got "Could not parse grass data"), strips
every quote, and keeps a declaration only when it splits on ``:`` into exactly
two parts, so a caption with a colon in it silently disappears.
:func:`parse_grass` reproduces those rules so a test can prove the shipped file
parses, and :func:`grass_problems` names what the Browser would drop.

The local server's ``neo4j.conf`` applies the style on every Browser login
through ``browser.post_connect_cmd``. Browser splits that setting into several
commands at every ``;`` outside quotes, so the style travels as one JSON object
(Browser's ``:style`` accepts JSON too), which has no bare semicolons:
:func:`style_command`.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

from engramdb.platform.cypher_files import CYPHER_DIR

STYLE_FILE: Path = CYPHER_DIR / "browser" / "style.grass"
#: What a rule's selector may look like: the defaults, or one label / relationship type.
SELECTOR = re.compile(r"^(node|relationship)(\.[A-Za-z_][A-Za-z0-9_]*)?$")


def parse_grass(text: str) -> dict[str, dict[str, str]]:
    """``{selector: {property: value}}`` exactly as Neo4j Browser 5 parses GraSS text.

    A faithful port: JSON is tried first; otherwise one pass over the characters
    where ``{``/``}`` open and close a rule (a nested pair is dropped), quotes
    toggle a literal span and are themselves dropped, whitespace outside a rule
    is dropped from the selector, and each ``;``-separated declaration is kept
    only if it splits on ``:`` into exactly two parts.
    """
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        return {str(k): {str(p): str(v) for p, v in dict(rule).items()} for k, rule in parsed.items()}
    in_quotes = in_rule = nested = False
    selector = body = ""
    bodies: dict[str, str] = {}
    for char in text:
        structural = True
        if char == "{":
            if in_quotes:
                structural = False
            elif in_rule:
                nested = True
            else:
                in_rule = True
        elif char == "}":
            if in_quotes:
                structural = False
            elif nested:
                nested = False
            else:
                in_rule = False
                bodies[selector] = body
                selector = body = ""
        elif char in "'\"":
            in_quotes = not in_quotes
        else:
            structural = False
        if not structural:
            if in_rule:
                body += char
            elif not char.isspace():
                selector += char
    rules: dict[str, dict[str, str]] = {}
    for name, rule_body in bodies.items():
        declarations: dict[str, str] = {}
        for declaration in rule_body.split(";"):
            parts = declaration.split(":")
            if len(parts) == 2:
                declarations[parts[0].strip()] = parts[1].strip()
        rules[name] = declarations
    return rules


def grass_problems(text: str) -> list[str]:
    """What the Browser would reject or silently drop in ``text`` (empty when it reads as written)."""
    problems: list[str] = []
    if "/*" in text or "//" in text:
        problems.append("comments: GraSS has none, the Browser reads them as part of a selector")
    if ":style" in text:
        problems.append("':style' in the text cuts a pasted :style command short")
    rules = parse_grass(text)
    if not rules:
        problems.append("no rules parsed")
    for selector in rules:
        if not SELECTOR.match(selector):
            problems.append(f"selector {selector!r} is not node/relationship[.Name]")
    # Every declaration written must survive the parse (one colon each, no stray quotes).
    written = re.findall(r"([A-Za-z-]+)\s*:", re.sub(r'"[^"]*"', '""', text))
    kept = sum(len(d) for d in rules.values())
    if len(written) != kept:
        problems.append(f"{len(written)} declarations written but {kept} survive the Browser's parser")
    return problems


@cache
def style_rules() -> dict[str, dict[str, str]]:
    """The shipped style sheet as the Browser sees it."""
    return parse_grass(STYLE_FILE.read_text())


def captions() -> dict[str, str]:
    """``{"node.Entity": "{name}", "relationship.QA": "{question}", ...}`` for every styled label/type."""
    return {selector: rule["caption"] for selector, rule in style_rules().items() if "caption" in rule}


def style_command() -> str:
    """The Browser command that applies the style: ``:style`` followed by the sheet as one JSON line.

    Also the value of ``browser.post_connect_cmd`` (without the colon, which
    Browser adds to each post-connect command).
    """
    return ":style " + json.dumps(style_rules(), separators=(",", ":"), ensure_ascii=True)

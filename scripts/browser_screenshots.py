"""Drive the real Neo4j Browser with headless Chromium and save screenshots of catalogue queries.

What it proves: the local server's ``neo4j.conf`` makes Browser apply engramdb's
style sheet at login (the ``:style`` post-connect frame is there, and the style
Browser stored equals ``cypher/browser/style.grass``), and catalogue queries
read well as graphs. It does what an analyst does: open Browser, log in, set
``:param`` values, paste a query from ``cypher/examples/``, run it, look.

    ENGRAMDB_HOME=.bench-home ENGRAMDB_NEO4J_BOLT_PORT=27687 ENGRAMDB_NEO4J_HTTP_PORT=27474 \\
        .venv/bin/python scripts/browser_screenshots.py            # -> docs/analyst/*.png

It starts the local Neo4j if needed (and leaves it running), builds the demo
memory from the sample corpus if the namespace is empty, keeps one hypergraph
run for the ``kept_run`` shot, and installs Debian's ``chromium`` with apt-get
if it is missing (as root). Chromium is driven through its DevTools protocol
(``scripts/cdp.py``, standard library only): values are typed with
``Input.insertText`` because keystrokes would auto-close brackets in Browser's
editor and Enter would run a query early. Every Chromium gets a fresh profile,
and Browser keeps styles in its profile, so each run starts unstyled until the
post-connect command applies the style.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from cdp import DevTools

from engramdb.platform.interfaces import analyst
from engramdb.platform.browser_style import style_rules
from engramdb.platform.config import Settings
from engramdb.platform.neo4j_server import POST_CONNECT_SETTING, LocalNeo4j, browser_post_connect_command

REPO = Path(__file__).resolve().parent.parent
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars", "--remote-debugging-port=0"]  # fmt: skip
KEPT_QUESTION = (
    "Who was the first president of the association that published the Journal of Psychotherapy Integration?"
)
WIDTH, HEIGHT = 1400, 900


def log(message: str, started: float) -> None:
    print(f"[{time.monotonic() - started:6.1f} s] {message}", flush=True)


# --------------------------------------------------------------------------- setup


def chromium_binary() -> str:
    """Debian's chromium, installed with apt-get when missing (root only; otherwise say how)."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    if os.geteuid() != 0:
        sys.exit("chromium is not installed: run `sudo apt-get update && sudo apt-get install -y chromium`")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update"], check=True, env=env, stdout=subprocess.DEVNULL)
    subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", "chromium"], check=True, env=env,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    found = shutil.which("chromium")
    if not found:
        sys.exit("apt-get installed chromium but no `chromium` is on PATH")
    return found


def demo_memory(settings: Settings, corpus: Path, started: float) -> dict[str, str]:
    """The parameters of the shots, from the demo memory (built from ``corpus`` when the namespace is empty)."""
    from engramdb.platform.interfaces.memory import Memory

    with Memory(settings=settings) as memory:
        if not memory.document_counts():
            log(f"namespace {settings.namespace!r} is empty: ingesting {corpus}", started)
            memory.ingest(str(corpus))
        driver = memory.driver
        kept = run(driver, settings, "kept_runs", {})
        if not kept.rows:
            log("keeping one hypergraph run for the kept_run shot", started)
            memory.ask(KEPT_QUESTION, strategy="hypergraph", keep_memory=True)
            kept = run(driver, settings, "kept_runs", {})
        documents = run(driver, settings, "documents", {})
        doc = next(r["id"] for r in documents.rows if r["title"] == "Journal of Psychotherapy Integration")
        return {"query_id": kept.rows[0]["query_id"], "doc_id": doc}


def run(driver: object, settings: Settings, name: str, params: dict[str, object]) -> analyst.CypherResult:
    entry = analyst.example(name)
    return analyst.run_cypher(driver, entry.text, {**params, "namespace": settings.namespace},  # type: ignore[arg-type]
                              database=settings.neo4j_database, limit=1000, timeout=60)  # fmt: skip


# --------------------------------------------------------------------------- Browser


class Browser:
    """One headless Chromium showing Neo4j Browser."""

    def __init__(self, binary: str) -> None:
        self.profile = Path(tempfile.mkdtemp(prefix="engramdb-chromium-"))
        self.process = subprocess.Popen(
            [binary, *CHROMIUM_FLAGS, f"--user-data-dir={self.profile}", f"--window-size={WIDTH},{HEIGHT}",
             "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.is_file() and port_file.read_text().strip()):
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise SystemExit("chromium did not open its DevTools port")
            time.sleep(0.1)
        port = port_file.read_text().split()[0]
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10))
        page = next(t for t in targets if t["type"] == "page")
        self.tools = DevTools(page["webSocketDebuggerUrl"])
        self.tools.call("Page.enable")
        self.tools.call("Runtime.enable")
        self.tools.call("Emulation.setDeviceMetricsOverride", width=WIDTH, height=HEIGHT, deviceScaleFactor=1,
                        mobile=False)  # fmt: skip

    def close(self) -> None:
        self.tools.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.profile, ignore_errors=True)

    def js(self, expression: str) -> object:
        return self.tools.evaluate(expression)

    def wait_for(self, expression: str, what: str, timeout: float = 90) -> object:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.js(expression)
            if value:
                return value
            time.sleep(0.25)
        raise SystemExit(f"timed out after {timeout:.0f} s waiting for {what}")

    def type_into(self, selector: str, text: str) -> None:
        """Focus a field, select what it holds, and insert ``text`` as one input event."""
        self.js(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.focus();"
                " if (e.select) e.select(); return true; })()")  # fmt: skip
        self.tools.call("Input.insertText", text=text)

    def login(self, url: str, user: str, password: str) -> None:
        self.tools.call("Page.navigate", url=url)
        self.wait_for("!!document.querySelector('[data-testid=\"password\"]')", "the login form")
        self.type_into('[data-testid="username"]', user)
        self.type_into('[data-testid="password"]', password)
        self.js("document.querySelector('[data-testid=\"connect\"]').click()")
        self.wait_for("!document.querySelector('[data-testid=\"password\"]')", "the login to finish")

    def frame_commands(self) -> list[str]:
        return list(self.js("Array.from(document.querySelectorAll('[data-testid=\"frameCommand\"]'))"
                            ".map(e => e.textContent)") or [])  # fmt: skip

    def command(self, text: str) -> None:
        """Type ``text`` into the editor and run it; wait until its frame is on top of the stream."""
        before = len(self.frame_commands())
        self.type_into('[data-testid="activeEditor"] textarea', text)
        self.js("document.querySelector('[data-testid=\"editor-Run\"]').click()")
        self.wait_for(f"document.querySelectorAll('[data-testid=\"frameCommand\"]').length > {before}",
                      f"the frame of {text.splitlines()[0][:60]!r}")  # fmt: skip

    def clear(self) -> None:
        self.type_into('[data-testid="activeEditor"] textarea', ":clear")
        self.js("document.querySelector('[data-testid=\"editor-Run\"]').click()")
        self.wait_for(
            "document.querySelectorAll('[data-testid=\"frameCommand\"]').length === 0", "an empty stream"
        )

    def graph_shot(self, path: Path) -> int:
        """Wait for the newest frame's graph to settle, show it full screen, save a PNG; returns its node count."""
        count = "document.querySelectorAll('[data-testid=\"frame\"]')[0].querySelectorAll('g.node').length"
        self.wait_for(f"{count} > 0", "the graph to draw", timeout=60)
        stable, last = 0, -1
        while stable < 4:  # the node count stops changing, then the force layout gets time to settle
            time.sleep(0.5)
            now = self.js(count)
            stable = stable + 1 if now == last else 0
            last = now
        self.js("document.querySelectorAll('[data-testid=\"frame\"]')[0]"
                ".querySelector('button[title=\"Fullscreen\"]').click()")  # fmt: skip
        time.sleep(3)
        self.zoom_to_fill()
        shot = self.tools.call("Page.captureScreenshot", format="png")
        path.write_bytes(base64.b64decode(shot["data"]))
        self.js("document.querySelectorAll('[data-testid=\"frame\"]')[0]"
                ".querySelector('button[title=\"Close fullscreen\"], button[title=\"Fullscreen\"]').click()")  # fmt: skip
        return int(last)

    def zoom_to_fill(self, fill: float = 0.85, step: float = 1.3, clicks: int = 6) -> None:
        """Zoom in while one more click (about ``step`` times larger) keeps the graph within ``fill`` of the
        canvas: Browser's zoom-to-fit never enlarges a small graph beyond 100 %."""
        covered = """(() => {
            const frame = document.querySelectorAll('[data-testid="frame"]')[0];
            const svg = frame.querySelector('g.node').ownerSVGElement.getBoundingClientRect();
            const boxes = Array.from(frame.querySelectorAll('g.node')).map(n => n.getBoundingClientRect());
            const width = Math.max(...boxes.map(b => b.right)) - Math.min(...boxes.map(b => b.left));
            const height = Math.max(...boxes.map(b => b.bottom)) - Math.min(...boxes.map(b => b.top));
            return Math.max(width / svg.width, height / svg.height);
        })()"""
        for _ in range(clicks):
            if float(self.js(covered) or 1.0) * step > fill:
                break
            self.js("document.querySelectorAll('[data-testid=\"frame\"]')[0]"
                    ".querySelector('button[aria-label=\"zoom-in\"]').click()")  # fmt: skip
            time.sleep(0.8)


def check_style_applied(browser: Browser) -> None:
    """The post-connect ``:style`` frame ran and Browser now holds exactly engramdb's style sheet."""
    commands = browser.frame_commands()
    if not any(c.startswith(":style") for c in commands):
        raise SystemExit(
            f"no :style frame after login (frames: {commands}); is browser.post_connect_cmd set?"
        )
    expected = style_rules()
    deadline = time.monotonic() + 20
    stored: object = None
    while time.monotonic() < deadline:  # Browser persists its state to localStorage shortly after changes
        stored = json.loads(str(browser.js("localStorage.getItem('neo4j.grass')") or "null"))
        if stored == expected:
            return
        time.sleep(0.5)
    differing = sorted(k for k in expected if not isinstance(stored, dict) or stored.get(k) != expected[k])
    raise SystemExit(f"Browser's stored style is not cypher/browser/style.grass (differs in {differing})")


# --------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--namespace", default="demo", help="Memory namespace shown (default: demo).")
    parser.add_argument("--corpus", type=Path, default=REPO / "ingestion" / "sample_corpus.json",
                        help="Corpus ingested when the namespace is empty.")  # fmt: skip
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "analyst", help="Where the PNGs go.")
    args = parser.parse_args()
    started = time.monotonic()
    settings = Settings(namespace=args.namespace)
    if not settings.uses_local_neo4j:
        sys.exit("this script drives the Browser of engramdb's local Neo4j; unset ENGRAMDB_NEO4J_URI")
    server = LocalNeo4j(settings)
    conf = server.conf_dir / "neo4j.conf"
    current = f"{POST_CONNECT_SETTING}={browser_post_connect_command()}"
    if server.pid() is not None and (not conf.is_file() or current not in conf.read_text()):
        log("the running Neo4j was configured with another style sheet: restarting it", started)
        server.stop()
    server.start()
    log(f"Neo4j up: {server.browser_url}", started)
    params = demo_memory(settings, args.corpus, started)
    log(f"demo memory ready in namespace {settings.namespace!r}", started)
    shots = [
        ("two_hop_paths", {"name": "Journal of Psychotherapy Integration"}),
        ("document_workspace", {"doc_id": params["doc_id"]}),
        ("kept_run", {"query_id": params["query_id"]}),
    ]
    binary = chromium_binary()
    browser = Browser(binary)
    try:
        log("chromium started", started)
        browser.login(server.browser_url, "neo4j", server.password())
        browser.wait_for("Array.from(document.querySelectorAll('[data-testid=\"frameCommand\"]'))"
                         ".some(e => e.textContent.startsWith(':style'))", "the post-connect :style frame")  # fmt: skip
        check_style_applied(browser)
        log("logged in; the post-connect command applied engramdb's style sheet", started)
        args.out.mkdir(parents=True, exist_ok=True)
        for name, values in shots:
            browser.clear()
            for key, value in {"namespace": settings.namespace, **values}.items():
                browser.command(f":param {key} => {json.dumps(value)}")
            browser.command(analyst.example(name).text)
            target = args.out / f"{name}.png"
            nodes = browser.graph_shot(target)
            log(f"{name}: {nodes} nodes drawn -> {target.relative_to(REPO) if target.is_relative_to(REPO) else target}",
                started)  # fmt: skip
    finally:
        browser.close()
    log("done", started)


if __name__ == "__main__":
    main()

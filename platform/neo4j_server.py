"""A local Neo4j 5.26 Community server assembled from Maven Central jars.

Why not a distribution tarball: only package registries are reachable on the
machines engramdb targets, so the server, Bolt and Browser jars come from Maven
Central (via ``mvn dependency:copy-dependencies``) and are launched directly
with Java 17. The jars depend only on the version, so one copy per user serves
every data home (``<user cache dir>/neo4j-<version>/lib``, or
``ENGRAMDB_NEO4J_LIB_DIR``). Everything else lives under ``<home>/neo4j``:
``conf``, ``data``, ``logs``, ``run`` (pid file) and ``auth/password``. The data
home and ``<home>/neo4j`` are mode 0700, the password files 0600, and the
password never appears on a command line (other users can read those). The
server writes only to log files, never to the caller's terminal.
"""

from __future__ import annotations

import os
import secrets
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from engramdb.platform.browser_style import style_command
from engramdb.platform.config import Settings
from engramdb.platform.errors import Neo4jServerError
from engramdb.platform.store_lock import ensure_private_dir, exclusive_lock

ENTRY_POINT = "org.neo4j.server.CommunityEntryPoint"
ADMIN_TOOL = "org.neo4j.cli.AdminTool"
# The official launcher opens these modules; the kernel needs them on Java 17.
ADD_OPENS = [
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
]
SENTINEL_JARS = ("neo4j-server-{v}.jar", "neo4j-bolt-{v}.jar", "neo4j-{v}.jar")
#: What ``<home>/neo4j`` holds; any of them marks the folder as ours to keep private.
NEO4J_HOME_ENTRIES = ("auth", "conf", "data", "lib", "logs", "plugins", "run")
#: Transaction logs: Neo4j's defaults (256 MB files, preallocated, kept 2 days)
#: cost ~0.5 GB of disk for a small memory. Small files, and only the last two
#: once a checkpoint has made them unnecessary for recovery.
TX_LOG_ROTATION_SIZE = "16M"
TX_LOG_RETENTION = "2 files"
#: The neo4j.conf setting whose commands Neo4j Browser runs after each login.
POST_CONNECT_SETTING = "browser.post_connect_cmd"


@dataclass(frozen=True)
class ServerStatus:
    """What ``engramdb neo4j status`` reports."""

    installed: bool
    running: bool
    pid: int | None
    bolt_uri: str
    browser_url: str
    home: Path


class LocalNeo4j:
    """Install, configure, start and stop the per-user Neo4j server."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.home = settings.neo4j_home
        self.lib = self._jar_dir()
        self.conf_dir = self.home / "conf"
        self.data_dir = self.home / "data"
        self.logs_dir = self.home / "logs"
        self.run_dir = self.home / "run"
        self.plugins_dir = self.home / "plugins"
        self.password_file = self.home / "auth" / "password"
        self.pid_file = self.run_dir / "engramdb-neo4j.pid"
        self.console_log = self.logs_dir / "console.log"

    # ---------------------------------------------------------------- paths
    @property
    def bolt_uri(self) -> str:
        return f"bolt://127.0.0.1:{self.settings.neo4j_bolt_port}"

    @property
    def browser_url(self) -> str:
        return f"http://127.0.0.1:{self.settings.neo4j_http_port}/browser/"

    def java(self) -> str:
        """Path of a Java 17+ executable, or a clear error saying how to get one."""
        explicit = self.settings.java_home or (
            Path(os.environ["JAVA_HOME"]) if os.environ.get("JAVA_HOME") else None
        )
        if explicit is not None:
            candidates = [str(explicit / "bin" / "java")]
            if not Path(candidates[0]).is_file():
                raise Neo4jServerError(
                    f"Java not found: {candidates[0]} does not exist. Point JAVA_HOME / ENGRAMDB_JAVA_HOME "
                    "at a JDK 17 directory, or unset it to use `java` from PATH."
                )
        else:
            found = shutil.which("java")
            candidates = [found] if found else []
        for candidate in candidates:
            if Path(candidate).is_file() and os.access(candidate, os.X_OK):
                version = java_major_version(candidate)
                if version is not None and version >= 17:
                    return candidate
                if version is not None:
                    raise Neo4jServerError(
                        f"Java {version} found at {candidate}, but Neo4j 5.26 needs Java 17 or newer. "
                        "Install a JDK 17 (e.g. `apt-get install openjdk-17-jre-headless`) and set JAVA_HOME."
                    )
        raise Neo4jServerError(
            "Java not found: Neo4j 5.26 needs Java 17. Install it (e.g. `apt-get install "
            "openjdk-17-jre-headless`) or set JAVA_HOME / ENGRAMDB_JAVA_HOME to a JDK 17 directory."
        )

    # -------------------------------------------------------------- install
    def _jar_dir(self) -> Path:
        """The configured jar folder; else a complete per-home copy left by an older
        engramdb (used in place: moving ~137 MB is slow and deleting it is the
        user's call); else the per-user cache."""
        if self.settings.neo4j_lib_dir is None:
            legacy = self.home / "lib"
            if _has_jars(legacy, self.settings.neo4j_version):
                return legacy
        return self.settings.neo4j_jars

    def is_installed(self) -> bool:
        return _has_jars(self.lib, self.settings.neo4j_version)

    def install(self) -> None:
        """Fetch the server, Bolt and Browser jars from Maven Central (idempotent).

        The jar folder may be shared by every home of the user, so one process
        installs at a time (a file lock; the others wait, then find the jars),
        into a staging folder renamed into place only when complete: a reader
        never sees half a lib folder.
        """
        if self.is_installed():
            return
        self.java()  # fail fast before a long download
        mvn = shutil.which("mvn")
        if not mvn:
            raise Neo4jServerError(
                "Maven (`mvn`) not found: it is needed once to fetch the Neo4j jars from Maven Central. "
                "Install it (e.g. `apt-get install maven`), or put the jars in ENGRAMDB_NEO4J_LIB_DIR."
            )
        self._private_home()
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        lock = self.lib.parent / f".{self.lib.name}.install.lock"
        with exclusive_lock(
            lock, f"waiting for another process to finish installing the Neo4j jars in {self.lib}"
        ):
            if not self.is_installed():
                self._fetch_jars(mvn)

    def _fetch_jars(self, mvn: str) -> None:
        """Maven copies the jars into a private staging folder, then one rename publishes it."""
        staging = self.lib.with_name(f"{self.lib.name}.partial-{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        pom = staging / "engramdb-neo4j-pom.xml"
        pom.write_text(_pom(self.settings.neo4j_version, self.settings.neo4j_browser_version))
        log = self.logs_dir / "install.log"
        with log.open("w") as out:
            result = subprocess.run(
                [
                    mvn, "-B", "-q", "-f", str(pom),
                    "org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies",
                    f"-DoutputDirectory={staging}", "-DincludeScope=runtime",
                ],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, check=False,
            )  # fmt: skip
        if result.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            tail = log.read_text(errors="replace").strip().splitlines()[-5:]
            raise Neo4jServerError(
                f"fetching Neo4j jars with Maven failed (exit {result.returncode}); see {log}:\n"
                + "\n".join(tail)
            )
        pom.unlink()
        shutil.rmtree(self.lib, ignore_errors=True)  # an incomplete older copy; we hold the install lock
        staging.rename(self.lib)

    # ------------------------------------------------------------ configure
    def _private_home(self) -> None:
        """The data home and ``<home>/neo4j`` exist with mode 0700 (tightened if older and ours)."""
        ensure_private_dir(self.settings.home)
        ensure_private_dir(self.home, NEO4J_HOME_ENTRIES)

    def _private_auth_files(self) -> None:
        """The password file and Neo4j's auth file are readable by this user only."""
        auth_ini = self.data_dir / "dbms" / "auth.ini"
        for path in (self.password_file, auth_ini):
            if path.is_file() and stat.S_IMODE(path.stat().st_mode) != 0o600:
                os.chmod(path, 0o600)

    def password(self) -> str:
        """The stored password, generated (and kept mode 0600) on first use."""
        if self.password_file.is_file():
            return self.password_file.read_text().strip()
        self._private_home()
        self.password_file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.password_file.parent, 0o700)
        value = secrets.token_urlsafe(24)
        while value.startswith("-"):  # neo4j-admin would read it as an option (1 password in 64)
            value = secrets.token_urlsafe(24)
        fd = os.open(self.password_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(value + "\n")
        return value

    def write_config(self) -> None:
        self._private_home()
        for d in (self.conf_dir, self.data_dir, self.logs_dir, self.run_dir, self.plugins_dir):
            d.mkdir(parents=True, exist_ok=True)
        s = self.settings
        lines = [
            "# Written by engramdb on every start; edit engramdb settings instead.",
            "server.default_listen_address=127.0.0.1",
            "server.default_advertised_address=127.0.0.1",
            f"server.bolt.listen_address=127.0.0.1:{s.neo4j_bolt_port}",
            f"server.bolt.advertised_address=127.0.0.1:{s.neo4j_bolt_port}",
            f"server.http.listen_address=127.0.0.1:{s.neo4j_http_port}",
            f"server.http.advertised_address=127.0.0.1:{s.neo4j_http_port}",
            "server.https.enabled=false",
            f"server.memory.heap.initial_size={s.neo4j_heap}",
            f"server.memory.heap.max_size={s.neo4j_heap}",
            f"server.memory.pagecache.size={s.neo4j_pagecache}",
            f"server.directories.data={self.data_dir}",
            f"server.directories.logs={self.logs_dir}",
            f"server.directories.plugins={self.plugins_dir}",
            f"server.directories.run={self.run_dir}",
            "dbms.security.auth_enabled=true",
            "dbms.usage_report.enabled=false",
            f"db.tx_log.rotation.size={TX_LOG_ROTATION_SIZE}",
            f"db.tx_log.rotation.retention_policy={TX_LOG_RETENTION}",
            # Neo4j Browser runs this after every login: it applies engramdb's style sheet.
            f"{POST_CONNECT_SETTING}={browser_post_connect_command()}",
        ]
        (self.conf_dir / "neo4j.conf").write_text("\n".join(lines) + "\n")

    def _set_initial_password(self, java: str) -> None:
        """Have Neo4j's admin tool store the password before the first start.

        The password reaches the tool through an argument file (``@file``, which
        the tool's option parser expands), never on its command line, where any
        local user could read it in the process list. The file is 0600 inside
        the 0700 auth folder and removed right after.
        """
        if (self.data_dir / "dbms" / "auth.ini").exists() or (self.data_dir / "databases").exists():
            return  # only possible before the first start; afterwards the stored one is in force
        password = self.password()  # generated (with its 0700 folder) on first use
        args_file = self.password_file.with_name("initial-password.args")
        args_file.unlink(missing_ok=True)
        fd = os.open(args_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(_argfile_quote(password) + "\n")
        env = {**os.environ, "NEO4J_HOME": str(self.home), "NEO4J_CONF": str(self.conf_dir)}
        try:
            with (self.logs_dir / "admin.log").open("a") as out:
                result = subprocess.run(
                    # a small fixed heap: the JVM default (a quarter of RAM) can fail to reserve beside running servers
                    [java, "-Xmx256m", "-cp", f"{self.lib}/*", ADMIN_TOOL, "dbms", "set-initial-password",
                     f"@{args_file}"],
                    env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, check=False,
                )  # fmt: skip
        finally:
            args_file.unlink(missing_ok=True)
        if result.returncode != 0:
            raise Neo4jServerError(
                f"setting the initial Neo4j password failed; see {self.logs_dir / 'admin.log'}"
            )
        self._private_auth_files()

    # ------------------------------------------------------------ lifecycle
    def pid(self) -> int | None:
        """The server's pid if our pid file names a live Neo4j process."""
        try:
            pid = int(self.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            return None
        return pid if ENTRY_POINT in cmdline else None

    def status(self) -> ServerStatus:
        pid = self.pid()
        return ServerStatus(
            installed=self.is_installed(),
            running=pid is not None and _port_open(self.settings.neo4j_bolt_port),
            pid=pid,
            bolt_uri=self.bolt_uri,
            browser_url=self.browser_url,
            home=self.home,
        )

    def start(self) -> ServerStatus:
        """Start the server (idempotent); wait until Bolt accepts a login and HTTP listens."""
        if self.pid() is not None:
            self._wait_for_bolt(time.monotonic() + self.settings.neo4j_start_timeout)
            return self.status()
        java = self.java()
        for port in (self.settings.neo4j_bolt_port, self.settings.neo4j_http_port):
            if _port_open(port):
                raise Neo4jServerError(
                    f"port {port} on 127.0.0.1 is already in use by another program, so Neo4j cannot listen "
                    "there. Stop that program, or choose other ports with ENGRAMDB_NEO4J_BOLT_PORT / "
                    "ENGRAMDB_NEO4J_HTTP_PORT."
                )
        self.install()
        self.write_config()
        self._set_initial_password(java)
        self._private_auth_files()
        cmd = [
            java, f"-Xmx{self.settings.neo4j_heap}", *ADD_OPENS, "-XX:+UseG1GC", "-Dfile.encoding=UTF-8",
            *shlex.split(self.settings.neo4j_jvm_options),
            "-cp", f"{self.plugins_dir}/*:{self.conf_dir}/*:{self.lib}/*", ENTRY_POINT,
            f"--home-dir={self.home}", f"--config-dir={self.conf_dir}", "--console-mode",
        ]  # fmt: skip
        env = {**os.environ, "NEO4J_HOME": str(self.home), "NEO4J_CONF": str(self.conf_dir)}
        with self.console_log.open("ab") as out:
            proc = subprocess.Popen(
                cmd, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True, cwd=self.home,
            )  # fmt: skip
        self.pid_file.write_text(f"{proc.pid}\n")
        deadline = time.monotonic() + self.settings.neo4j_start_timeout
        try:
            self._wait_for_bolt(deadline, proc)
        except Neo4jServerError:
            self.stop()
            raise
        return self.status()

    def _wait_for_bolt(self, deadline: float, proc: subprocess.Popen[bytes] | None = None) -> None:
        from neo4j import GraphDatabase
        from neo4j.exceptions import AuthError, ServiceUnavailable

        last: Exception | None = None
        while time.monotonic() < deadline:
            if proc is not None and proc.poll() is not None:
                raise Neo4jServerError(
                    f"Neo4j exited during start-up (code {proc.returncode}); see {self.console_log}:\n"
                    + self.log_tail(8)
                )
            # Bolt can come up before the HTTP (Browser) connector; wait for both.
            if _port_open(self.settings.neo4j_bolt_port) and _port_open(self.settings.neo4j_http_port):
                try:
                    with GraphDatabase.driver(self.bolt_uri, auth=("neo4j", self.password())) as driver:
                        driver.verify_connectivity()
                    return
                except AuthError as exc:
                    raise Neo4jServerError(
                        f"Neo4j rejected the stored password in {self.password_file}: {exc.message}"
                    ) from exc
                except (ServiceUnavailable, OSError) as exc:
                    last = exc
            time.sleep(0.5)
        raise Neo4jServerError(
            f"Neo4j did not answer on {self.bolt_uri} within {self.settings.neo4j_start_timeout:.0f} s "
            f"({last}); see {self.console_log}"
        )

    def stop(self, timeout: float = 60.0) -> bool:
        """SIGTERM the server and wait for it to exit; True if one was running."""
        pid = self.pid()
        if pid is None:
            self.pid_file.unlink(missing_ok=True)
            return False
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.2)
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
            while _alive(pid):
                time.sleep(0.1)
        self.pid_file.unlink(missing_ok=True)
        return True

    def log_tail(self, lines: int = 50) -> str:
        """Last lines of the server's main log (or the console log before it exists)."""
        for path in (self.logs_dir / "neo4j.log", self.console_log):
            if path.is_file():
                return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
        return ""


def browser_post_connect_command() -> str:
    """The value of ``browser.post_connect_cmd``: the ``:style`` command without its colon (Browser adds it)."""
    return style_command().removeprefix(":")


def java_major_version(java: str) -> int | None:
    """Major version of a java executable (17 for '17.0.15'), None if it won't run."""
    try:
        out = subprocess.run(
            [java, "-version"],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
            check=False,
        ).stderr
    except (OSError, subprocess.TimeoutExpired):
        return None
    for token in out.split():
        token = token.strip('"')
        head = token.split(".")[0]
        if head.isdigit() and "." in token or token.isdigit():
            major = int(head)
            return int(token.split(".")[1]) if major == 1 else major
    return None


def _has_jars(lib: Path, version: str) -> bool:
    """True if ``lib`` holds the server, kernel, Bolt and Browser jars of ``version``."""
    return all((lib / name.format(v=version)).is_file() for name in SENTINEL_JARS) and any(
        lib.glob("neo4j-browser-*.jar")
    )


def _argfile_quote(value: str) -> str:
    """``value`` as one quoted argument of a picocli ``@file`` (backslash escapes)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie child of ours still answers kill(0); reap it if we can.
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        state = Path(f"/proc/{pid}/stat")
        try:
            return state.read_text().split()[2] != "Z"
        except (OSError, IndexError):
            return False


def _pom(version: str, browser_version: str) -> str:
    deps = [
        ("org.neo4j.app", "neo4j-server", version),
        ("org.neo4j", "neo4j", version),
        ("org.neo4j", "neo4j-bolt", version),
        ("org.neo4j.client", "neo4j-browser", browser_version),
    ]
    body = "\n".join(
        f"    <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId><version>{v}</version></dependency>"
        for g, a, v in deps
    )
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0">\n'
        "  <modelVersion>4.0.0</modelVersion>\n"
        "  <groupId>engramdb</groupId><artifactId>neo4j-runtime</artifactId><version>1</version>\n"
        "  <packaging>pom</packaging>\n"
        f"  <dependencies>\n{body}\n  </dependencies>\n</project>\n"
    )

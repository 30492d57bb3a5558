"""Where a running ``engramdb serve`` of a data home can be reached: ``<home>/server/server.json``.

Why a file beside the token: the embedded vector store admits one process, so
while a server owns a data home every other command of that home (the CLI,
``engramdb mcp``) must go through it instead of opening the store. The server
writes its URL and pid here once it answers, and removes the file when it
stops cleanly. A server killed outright leaves the file behind; a reader then
finds its pid gone, ignores the file and removes it, so a crash never sends
clients to a dead address.

``--server URL`` or ``ENGRAMDB_SERVER_URL`` name a server explicitly (another
home, another machine); the file is only the default.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from engramdb.platform.interfaces.server_tokens import read_admin_token, server_dir
from engramdb.platform.processes import pid_alive

SERVER_FILE = "server.json"
URL_ENV = "ENGRAMDB_SERVER_URL"
TOKEN_ENV = "ENGRAMDB_SERVER_TOKEN"

log = logging.getLogger("engramdb.server")


@dataclass(frozen=True)
class RunningServer:
    """A server to send requests to: its URL, the token to send, and its pid when it is local."""

    url: str
    token: str | None
    pid: int | None = None


def server_file(home: Path) -> Path:
    return server_dir(home) / SERVER_FILE


def announce_server(home: Path, url: str) -> Path:
    """Record this process as the home's server (mode 0600, replaced atomically)."""
    folder = server_dir(home)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / SERVER_FILE
    tmp = folder / f".{SERVER_FILE}.{os.getpid()}.tmp"
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump({"url": url, "pid": os.getpid()}, fh)
        fh.write("\n")
    os.replace(tmp, path)
    return path


def withdraw_server(home: Path) -> None:
    """Remove the record if it is this process's (a newer server of the home may have replaced it)."""
    path = server_file(home)
    record = _read(path)
    if record is not None and record.get("pid") == os.getpid():
        path.unlink(missing_ok=True)


def _read(path: Path) -> dict[str, object] | None:
    try:
        data = json.loads(path.read_text())
    except (FileNotFoundError, ValueError, OSError):
        return None
    return data if isinstance(data, dict) else None


def local_server(home: Path) -> RunningServer | None:
    """The live server recorded in ``home``, or None; a record whose pid is gone is removed."""
    path = server_file(home)
    record = _read(path)
    if record is None:
        return None
    url, pid = record.get("url"), record.get("pid")
    if not isinstance(url, str) or not isinstance(pid, int) or not pid_alive(pid) or pid == os.getpid():
        if not (isinstance(pid, int) and pid == os.getpid()):
            log.info("ignoring the stale server record %s (pid %s is gone)", path, pid)
            path.unlink(missing_ok=True)
        return None
    return RunningServer(url, os.environ.get(TOKEN_ENV) or read_admin_token(home), pid)


def find_server(home: Path, url: str | None = None) -> RunningServer | None:
    """The server commands of ``home`` should go through: ``url`` when given, else ``$ENGRAMDB_SERVER_URL``,
    else the live one recorded in the home; None means "open the stores here"."""
    named = url or os.environ.get(URL_ENV) or None
    if named:
        recorded = local_server(home)
        same = recorded is not None and recorded.url.rstrip("/") == named.rstrip("/")
        token = os.environ.get(TOKEN_ENV) or (recorded.token if same else None) or read_admin_token(home)
        return RunningServer(named.rstrip("/"), token)
    return local_server(home)

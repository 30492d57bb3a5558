"""Access tokens of ``engramdb serve``: one admin token, and namespace-scoped tokens.

Why files in the data home: the server and the CLI (``engramdb token ...``) are
different processes that must agree on who may call the API, and the data home
is already private to its user (mode 0700). The admin token is kept in clear in
``<home>/server/token`` (mode 0600, written the way the Neo4j password file is:
``O_EXCL``, so two first starts cannot write two tokens), because its owner has
to be able to show it again. Scoped tokens are shown once when created and only
their SHA-256 is stored (``<home>/server/tokens.json``, mode 0600): a leaked
file then gives nobody a working token. Tokens are long random strings, so a
plain hash (no salt, no slow KDF) is enough; comparisons are constant-time.

The server rereads the files when they change, so ``engramdb token create``
takes effect on a running server without a restart.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engramdb.platform.config import validate_namespace
from engramdb.platform.errors import EngramError, InputError
from engramdb.platform.store_lock import ensure_private_dir, exclusive_lock

SERVER_DIR = "server"
ADMIN_TOKEN_FILE = "token"
SCOPED_TOKENS_FILE = "tokens.json"
TOKEN_PREFIX = "edb_"
#: Characters shown of a scoped token's hash in listings (enough to tell tokens apart).
TOKEN_ID_CHARS = 12

log = logging.getLogger("engramdb.server")


@dataclass(frozen=True)
class Principal:
    """Who made a request: the admin (every namespace, analyst Cypher) or a token scoped to namespaces."""

    token_id: str
    namespaces: frozenset[str] | None  # None: every namespace

    @property
    def is_admin(self) -> bool:
        return self.namespaces is None

    def may_use(self, namespace: str) -> bool:
        return self.namespaces is None or namespace in self.namespaces


def server_dir(home: Path) -> Path:
    return home / SERVER_DIR


def admin_token_path(home: Path) -> Path:
    return server_dir(home) / ADMIN_TOKEN_FILE


def scoped_tokens_path(home: Path) -> Path:
    return server_dir(home) / SCOPED_TOKENS_FILE


def _private_server_dir(home: Path) -> Path:
    """``<home>/server`` with mode 0700 (the home itself tightened as the Neo4j server does)."""
    ensure_private_dir(home)
    folder = server_dir(home)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    return folder


def new_token() -> str:
    """A fresh bearer token: 256 random bits, URL-safe, recognisable by its prefix."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def read_admin_token(home: Path) -> str | None:
    """The admin token, or None when none was created yet (or the file is empty)."""
    path = admin_token_path(home)
    try:
        value = path.read_text().strip()
    except FileNotFoundError:
        return None
    return value or None


def ensure_admin_token(home: Path) -> tuple[str, bool]:
    """The admin token and whether it was created now (mode 0600, created at most once).

    ``O_EXCL`` makes a race between two first starts harmless: the loser reads the winner's token.
    """
    existing = read_admin_token(home)
    if existing:
        return existing, False
    folder = _private_server_dir(home)
    path = folder / ADMIN_TOKEN_FILE
    value = new_token()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        # Created meanwhile by another process (or left empty by a crash: replace that one).
        existing = read_admin_token(home)
        if existing:
            return existing, False
        path.unlink(missing_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(value + "\n")
    return value, True


def _read_scoped(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise EngramError(f"cannot read the token file {path}: {exc}") from exc
    tokens = data.get("tokens") if isinstance(data, dict) else None
    if not isinstance(tokens, list):
        raise EngramError(f"the token file {path} is not an engramdb token file")
    return [t for t in tokens if isinstance(t, dict)]


def create_scoped_token(home: Path, namespaces: list[str]) -> tuple[str, str]:
    """A new token limited to ``namespaces``: returns ``(token, token_id)``; only its hash is stored."""
    if not namespaces:
        raise InputError("a scoped token needs at least one --namespace")
    checked = []
    for namespace in namespaces:
        try:
            checked.append(validate_namespace(namespace))
        except ValueError as exc:
            raise InputError(str(exc)) from exc
    folder = _private_server_dir(home)
    path = folder / SCOPED_TOKENS_FILE
    token = new_token()
    digest = token_hash(token)
    with exclusive_lock(folder / ".tokens.lock"):
        tokens = _read_scoped(path)
        tokens.append({"sha256": digest, "namespaces": sorted(set(checked)), "created": time.time()})
        _write_private_json(path, {"tokens": tokens})
    return token, digest[:TOKEN_ID_CHARS]


def _write_private_json(path: Path, data: dict[str, Any]) -> None:
    """Replace ``path`` atomically with a 0600 file: a reader sees the old file or the new one, never half."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(data, fh, indent=2)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


class TokenBook:
    """The tokens the server accepts, reread whenever either token file changes.

    A ``stat`` of two small files per request is cheap next to any request, and it lets a token
    created (or a file edited to remove one) take effect without restarting the server.
    """

    def __init__(self, home: Path) -> None:
        self.home = home
        self._signature: tuple[Any, ...] | None = None
        self._admin_hash: str | None = None
        self._scoped: list[tuple[str, frozenset[str]]] = []

    def _file_signature(self) -> tuple[Any, ...]:
        out: list[Any] = []
        for path in (admin_token_path(self.home), scoped_tokens_path(self.home)):
            try:
                info = path.stat()
                out.append((info.st_ino, info.st_mtime_ns, info.st_size))
            except FileNotFoundError:
                out.append(None)
        return tuple(out)

    def _reload(self) -> None:
        signature = self._file_signature()
        if signature == self._signature:
            return
        admin = read_admin_token(self.home)
        self._admin_hash = token_hash(admin) if admin else None
        scoped = []
        try:
            entries = _read_scoped(scoped_tokens_path(self.home))
        except EngramError as exc:  # fail closed for scoped tokens; the admin token keeps working
            log.error("%s; no scoped token is accepted until it is fixed", exc)
            entries = []
        for entry in entries:
            digest, names = entry.get("sha256"), entry.get("namespaces")
            if isinstance(digest, str) and isinstance(names, list):
                scoped.append((digest, frozenset(n for n in names if isinstance(n, str))))
        self._scoped = scoped
        self._signature = signature

    def verify(self, token: str) -> Principal | None:
        """The principal ``token`` stands for, or None when it is not a valid token."""
        self._reload()
        digest = token_hash(token)
        if self._admin_hash is not None and hmac.compare_digest(digest, self._admin_hash):
            return Principal("admin", None)
        for stored, namespaces in self._scoped:
            if hmac.compare_digest(digest, stored):
                return Principal(stored[:TOKEN_ID_CHARS], namespaces)
        return None

"""Operating-system file locks (one owner per data folder, one installer per cache)
and private data folders.

Why the OS and not a pid file: an ``fcntl.flock`` lock belongs to an open file,
so the kernel drops it the moment its process exits, even on SIGKILL or a power
cut of the process; nothing stale is ever left to clean up, and a lock that is
held always has a live holder. The lock file is never deleted (deleting it
would let two processes lock two different files of the same name).

Two uses:

* :func:`acquire_owner_lock` - exclusive and non-blocking. The embedded vector
  engine must not be opened by a second process even for reading (that
  disturbs the holder's files), so the owner lock is taken before anything
  else touches the folder, and a refused opener learns who holds it: the holder
  writes its pid and command line into the lock file once it owns it.
* :func:`exclusive_lock` - exclusive and blocking, for short critical sections
  shared between processes, such as installing the Neo4j jars into a cache.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import stat
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from engramdb.platform.errors import EngramError

LOCK_FILE_NAME = ".owner.lock"
#: Entries that mark a folder as an engramdb data home (so tightening it is safe).
HOME_MARKERS = ("neo4j", "qdrant", "cache")
_MAX_COMMAND_CHARS = 300
_HOLDER_READ_ATTEMPTS = 10
_HOLDER_READ_PAUSE_S = 0.05

log = logging.getLogger("engramdb")


@dataclass(frozen=True)
class LockHolder:
    """Who owns a lock, as the owner wrote it into the lock file."""

    pid: int | None
    command: str

    def describe(self) -> str:
        if self.pid is None:
            return "an unidentified process"
        return f"pid {self.pid}: {self.command}" if self.command else f"pid {self.pid}"


class LockBusyError(EngramError):
    """Another open file (another process, or another opener here) owns the lock."""

    def __init__(self, path: Path, holder: LockHolder) -> None:
        self.path = path
        self.holder = holder
        super().__init__(f"{path} is locked by {holder.describe()}")

    @property
    def held_by_this_process(self) -> bool:
        return self.holder.pid == os.getpid()


class OwnerLock:
    """A held owner lock; :meth:`release` (or process exit) gives it up."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Clear the holder record and unlock; idempotent."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.ftruncate(fd, 0)  # no stale holder record for a human reading the file
        finally:
            os.close(fd)  # closing the only descriptor releases the flock


def acquire_owner_lock(directory: Path) -> OwnerLock:
    """Own ``directory`` (created if missing, mode 0700) or raise :class:`LockBusyError` at once.

    The lock is per open file, so a second acquisition in the same process is
    refused too; share one owner within a process instead.
    """
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = directory / LOCK_FILE_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _read_holder(fd)
        os.close(fd)
        raise LockBusyError(path, holder) from None
    except BaseException:
        os.close(fd)
        raise
    _write_holder(fd)
    return OwnerLock(path, fd)


@contextmanager
def exclusive_lock(path: Path, waiting_message: str = "") -> Iterator[None]:
    """Hold an exclusive lock on ``path`` for the ``with`` block, waiting for other holders.

    ``waiting_message`` is logged (INFO, logger ``engramdb``) when we have to wait.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if waiting_message:
                log.info(waiting_message)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _write_holder(fd: int) -> None:
    """Record this process as the holder: one write, so a reader sees all of it or nothing."""
    record = json.dumps({"pid": os.getpid(), "command": _command_line(), "since": time.time()})
    os.ftruncate(fd, 0)
    os.pwrite(fd, record.encode(), 0)


def _read_holder(fd: int) -> LockHolder:
    """The holder record, retried briefly: the holder may be between taking the lock and writing it."""
    for _ in range(_HOLDER_READ_ATTEMPTS):
        raw = os.pread(fd, 4096, 0)
        try:
            data = json.loads(raw)
            return LockHolder(int(data["pid"]), str(data.get("command", "")))
        except (ValueError, KeyError, TypeError):
            time.sleep(_HOLDER_READ_PAUSE_S)
    return LockHolder(None, "")


def _command_line() -> str:
    """This process's command line, shortened, for the message another process will show."""
    try:
        parts = Path("/proc/self/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
        command = " ".join(p.decode(errors="replace") for p in parts)
    except OSError:
        command = " ".join([sys.executable, *sys.argv])
    command = " ".join(command.split())  # one line, whatever the arguments held
    if len(command) > _MAX_COMMAND_CHARS:
        command = command[: _MAX_COMMAND_CHARS - 3] + "..."
    return command


def ensure_private_dir(path: Path, markers: tuple[str, ...] = HOME_MARKERS) -> Path:
    """Create ``path`` with mode 0700, or tighten it to 0700 if it exists and is ours.

    A data home holds the Neo4j password and every stored memory, so other
    users must not read it. "Ours" means owned by this user, not a shared
    sticky folder like /tmp, not the user's home or /, and either empty or
    already holding engramdb data (one of ``markers``): a home pointed at some
    unrelated existing folder is left as it is.
    """
    if not path.exists():
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(path, 0o700)  # mkdir's mode is filtered by the umask; make it exact
        return path
    info = path.stat()
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077 and _is_ours(path, info, markers):
        os.chmod(path, mode & 0o700)
    return path


def _is_ours(path: Path, info: os.stat_result, markers: tuple[str, ...]) -> bool:
    if info.st_uid != os.getuid() or info.st_mode & stat.S_ISVTX:
        return False
    resolved = path.resolve()
    if resolved in (Path("/"), Path.home().resolve()):
        return False
    entries = {entry.name for entry in resolved.iterdir()}
    return not entries or bool(entries & set(markers))

"""One owner per embedded vector store, enforced by the OS, checked with real processes.

Process A opens the store and writes; process B (a separate Python, or the real
CLI) must be refused with one line naming A, without disturbing A's writes; the
OS must release the lock when A dies, even by SIGKILL.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import IO

import pytest

from engramdb.platform.config import Settings
from engramdb.platform.neo4j_server import LocalNeo4j
from engramdb.platform.store_lock import (
    LOCK_FILE_NAME,
    LockBusyError,
    acquire_owner_lock,
    ensure_private_dir,
)
from engramdb.platform.vectors import EdgeVectorStore, VectorStoreError

BATCH = 20

# Writes batches of 20 points into namespace "ns" until the stop file appears
# (or, with a batch limit, writes that many and then idles until killed).
_WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    import numpy as np
    from engramdb.platform.vectors import EdgeVectorStore, VectorPoint

    path, stop, limit = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    store = EdgeVectorStore(path)
    store.ensure_collection("qa", 8)
    rng = np.random.default_rng(0)
    batch = 0
    while not stop.exists():
        if limit and batch >= limit:
            print("idle", flush=True)
            time.sleep(600)
        points = [VectorPoint(f"b{batch}-{i}", rng.standard_normal(8), {"doc_id": f"d{batch}"}) for i in range(20)]
        store.upsert("qa", "ns", points)
        batch += 1
        print(f"wrote {batch}", flush=True)
    store.close()
    print(f"closed {batch}", flush=True)
    """
)

# Tries to open the store; exit 3 and the message on stdout when refused.
_OPENER = textwrap.dedent(
    """
    import sys
    from engramdb.platform.vectors import EdgeVectorStore, VectorStoreError

    try:
        store = EdgeVectorStore(sys.argv[1])
    except VectorStoreError as exc:
        print(exc)
        sys.exit(3)
    print(store.count("qa", "ns"))
    store.close()
    """
)

# Holds a Memory's vector store open until the stop file appears.
_MEMORY_HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from engramdb.platform.interfaces.memory import Memory

    stop = Path(sys.argv[1])
    memory = Memory(namespace="holder")
    memory.vectors.ensure_collection("probe", 4)
    print("holding", flush=True)
    while not stop.exists():
        time.sleep(0.05)
    memory.close()
    print("closed", flush=True)
    """
)


def _script(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _start(script: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(script), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )


def _read_until(stream: IO[str], prefix: str, at_least: int = 0) -> int:
    """Read lines until one starts with ``prefix`` (and, for counters, reaches ``at_least``)."""
    while True:
        line = stream.readline()
        assert line, f"process ended before printing {prefix!r}"
        if line.startswith(prefix):
            value = line[len(prefix) :].strip()
            if not value.isdigit() or int(value) >= at_least:
                return int(value) if value.isdigit() else 0


def _try_open(script: Path, path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(script), str(path)], capture_output=True, text=True, timeout=120
    )


def _refusal(path: Path, pid: int, command: str) -> str:
    return (
        f"the embedded vector store at {path} is open in another process (pid {pid}: {command}); "
        "only one process may use it at a time. Wait for that process to finish or stop it, "
        "or set ENGRAMDB_QDRANT_URL to a Qdrant server for concurrent access. To share this memory "
        "instead, run `engramdb serve` on its data home: while it runs, engramdb commands, `engramdb mcp` "
        "and `engramdb.connect()` go through it."
    )


def test_second_process_is_refused_and_the_writer_is_undisturbed(tmp_path: Path) -> None:
    path, stop = tmp_path / "qdrant", tmp_path / "stop"
    writer, opener = _script(tmp_path, "writer.py", _WRITER), _script(tmp_path, "opener.py", _OPENER)
    a = _start(writer, str(path), str(stop), "0")
    try:
        assert a.stdout is not None
        _read_until(a.stdout, "wrote ", at_least=3)

        b = _try_open(opener, path)
        assert b.returncode == 3, b.stderr
        command = f"{sys.executable} {writer} {path} {stop} 0"
        assert b.stdout.strip() == _refusal(path, a.pid, command)

        seen = _read_until(a.stdout, "wrote ", at_least=1)
        _read_until(a.stdout, "wrote ", at_least=seen + 3)  # A keeps writing after B's attempt
        stop.touch()
        written = _read_until(a.stdout, "closed ")
        assert a.wait(timeout=60) == 0  # closed cleanly: every flush after B's attempt succeeded
    finally:
        a.kill()

    with EdgeVectorStore(path) as store:  # A released the lock on close
        assert store.count("qa", "ns") == written * BATCH
        assert store.count("qa", "ns", where={"doc_id": "d0"}) == BATCH
        assert store.count("qa", "ns", where={"doc_id": f"d{written - 1}"}) == BATCH
    assert (path / LOCK_FILE_NAME).read_text() == ""  # no stale holder record


def test_the_os_releases_the_lock_of_a_killed_owner(tmp_path: Path) -> None:
    path, stop = tmp_path / "qdrant", tmp_path / "stop"
    writer, opener = _script(tmp_path, "writer.py", _WRITER), _script(tmp_path, "opener.py", _OPENER)
    a = _start(writer, str(path), str(stop), "5")
    try:
        assert a.stdout is not None
        _read_until(a.stdout, "idle")
        assert _try_open(opener, path).returncode == 3  # still owned while A lives
    finally:
        os.kill(a.pid, signal.SIGKILL)
        a.wait(timeout=60)
    assert a.returncode == -signal.SIGKILL

    b = _try_open(opener, path)
    assert b.returncode == 0, b.stdout + b.stderr
    assert int(b.stdout.strip()) == 5 * BATCH  # everything A had acknowledged is there
    with EdgeVectorStore(path) as store:
        assert store.count("qa", "ns") == 5 * BATCH


def test_a_memory_in_another_process_gets_one_clear_error_line(
    tmp_path: Path, neo4j_server: LocalNeo4j, isolated_settings: Settings
) -> None:
    env = {
        **os.environ,
        "ENGRAMDB_HOME": str(isolated_settings.home),
        "ENGRAMDB_NEO4J_URI": neo4j_server.bolt_uri,
        "ENGRAMDB_NEO4J_PASSWORD": neo4j_server.password(),
        "COLUMNS": "1000",  # the CLI's console would otherwise wrap long lines at 80 columns
    }
    stop = tmp_path / "stop"
    holder_script = _script(tmp_path, "holder.py", _MEMORY_HOLDER)
    a = _start(holder_script, str(stop), env=env)
    try:
        assert a.stdout is not None
        _read_until(a.stdout, "holding")
        cli = Path(sys.executable).with_name("engramdb")
        b = subprocess.run([str(cli), "stats"], capture_output=True, text=True, env=env, timeout=300)
        stop.touch()
        _read_until(a.stdout, "closed")
        assert a.wait(timeout=60) == 0
    finally:
        a.kill()
    assert b.returncode == 1
    lines = b.stderr.strip().splitlines()
    command = f"{sys.executable} {holder_script} {stop}"
    assert lines == ["error: " + _refusal(isolated_settings.qdrant_path, a.pid, command)]

    opener = _script(tmp_path, "opener.py", _OPENER)
    assert _try_open(opener, isolated_settings.qdrant_path).returncode == 0  # the holder closed: free again


def test_memories_in_one_process_share_one_store(tmp_path: Path, isolated_settings: Settings) -> None:
    from engramdb.platform.interfaces.memory import Memory

    first = Memory(namespace="first", settings=isolated_settings)
    second = Memory(namespace="second", settings=isolated_settings)
    first.vectors.ensure_collection("probe", 4)
    first.vectors.upsert("probe", "first", [_point("p1")])
    second.vectors.upsert("probe", "second", [_point("p2"), _point("p3")])
    assert first.vectors.store is second.vectors.store
    opener = _script(tmp_path, "opener.py", _OPENER)
    assert _try_open(opener, isolated_settings.qdrant_path).returncode == 3  # another process: refused

    first.close()
    assert second.vectors.count("probe", "second") == 2  # still open for the other Memory
    assert _try_open(opener, isolated_settings.qdrant_path).returncode == 3
    second.close()
    assert _try_open(opener, isolated_settings.qdrant_path).returncode == 0  # last close released it


def _point(key: str):
    from engramdb.platform.vectors import VectorPoint

    return VectorPoint(key, [1.0, 0.5, 0.0, 0.0], {})


def test_a_second_opener_in_the_same_process_is_told_to_share(tmp_path: Path) -> None:
    with EdgeVectorStore(tmp_path / "q"):
        with pytest.raises(
            VectorStoreError, match=r"already open in this process \(pid \d+\).*acquire_vector_store"
        ):
            EdgeVectorStore(tmp_path / "q")
    EdgeVectorStore(tmp_path / "q").close()  # released by close


def test_owner_lock_records_its_holder_and_is_private(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    lock = acquire_owner_lock(folder)
    try:
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert stat.S_IMODE(lock.path.stat().st_mode) == 0o600
        with pytest.raises(LockBusyError) as info:
            acquire_owner_lock(folder)
        assert info.value.held_by_this_process
        assert info.value.holder.pid == os.getpid()
        assert sys.executable in info.value.holder.command
    finally:
        lock.release()
    lock.release()  # idempotent
    acquire_owner_lock(folder).release()


def test_a_new_home_is_created_private(tmp_path: Path) -> None:
    home = tmp_path / "a" / "home"
    ensure_private_dir(home)
    assert stat.S_IMODE(home.stat().st_mode) == 0o700


def test_an_existing_engramdb_home_is_tightened_but_a_foreign_folder_is_not(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "qdrant").mkdir(parents=True)
    home.chmod(0o755)
    ensure_private_dir(home)
    assert stat.S_IMODE(home.stat().st_mode) == 0o700

    foreign = tmp_path / "projects"
    (foreign / "notes.txt").parent.mkdir()
    (foreign / "notes.txt").write_text("not engramdb data")
    foreign.chmod(0o755)
    ensure_private_dir(foreign)
    assert stat.S_IMODE(foreign.stat().st_mode) == 0o755

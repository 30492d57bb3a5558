"""The package layout: one package ``engramdb`` from four top-level folders, installed editable.

Why these tests: the folders sit at the top of the checkout, so a careless
layout would let ``import platform`` find our ``platform/`` instead of the
standard library's; and a copy-install once let the suite run stale code after
an edit. An editable install must see edits at once, and a regular wheel must
still carry every folder under ``engramdb/``.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _python(code: str, cwd: Path = REPO) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_python_started_in_the_checkout_imports_the_standard_library_platform() -> None:
    where = _python("import platform; print(platform.__file__)")
    assert not Path(where).resolve().is_relative_to(REPO), where
    assert _python("import platform; print(callable(platform.system))") == "True"


def test_engramdb_modules_resolve_to_the_files_in_the_checkout() -> None:
    where = _python("import engramdb.retrieval.strategy as m; print(m.__file__)", cwd=Path("/"))
    assert Path(where).resolve() == REPO / "retrieval" / "strategy.py"


def test_a_new_file_in_the_checkout_is_importable_without_reinstalling() -> None:
    name = f"_editable_probe_{uuid.uuid4().hex[:8]}"
    probe = REPO / "retrieval" / f"{name}.py"
    probe.write_text('"""Probe."""\nVALUE = 41 + 1\n')
    try:
        assert _python(f"from engramdb.retrieval.{name} import VALUE; print(VALUE)", cwd=Path("/")) == "42"
    finally:
        probe.unlink()


def test_a_regular_wheel_maps_the_folders_under_engramdb(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", str(REPO), "-w", str(tmp_path)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (wheel,) = tmp_path.glob("engramdb-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "engramdb/__init__.py" in names
    for path in (
        "platform/interfaces/cli.py",
        "retrieval/chain/strategy.py",
        "ingestion/pipeline.py",
        "retrieval/strategy.py",
        "cypher/schema/indexes.cypher",
    ):
        assert f"engramdb/{path}" in names
    assert not any(n.endswith(".pth") or n.startswith(".editable") for n in names)
    assert not any(n.startswith("platform/") for n in names)

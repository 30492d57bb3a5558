"""Ingesting a real folder through the CLI and the SDK, on the real Neo4j and vector store.

A user's folder holds Markdown in subfolders, same-named files in different
places, stray binaries, empty files, PDFs and HTML pages. Every good file must
end in memory, every bad one be named with its reason, and no two files may
ever overwrite each other.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from engramdb.ingestion.documents import make_document
from engramdb.platform.errors import InputError
from engramdb.platform.interfaces.cli import main
from engramdb.platform.interfaces.memory import Memory
from tests.conftest import cli_environment

FIXTURES = Path(__file__).parent / "fixtures" / "documents"


@pytest.fixture
def cli_env(isolated_settings, namespace: str) -> dict[str, str]:
    return {**cli_environment(isolated_settings, namespace), "ENGRAMDB_STAGES": "[]"}


def run(env: dict[str, str], *args: str, input: str | bytes | None = None):
    return CliRunner().invoke(main, list(args), env=env, input=input, catch_exceptions=False)


def _documents(env: dict[str, str], *extra: str) -> dict[str, dict]:
    result = run(env, "documents", "--json", *extra)
    assert result.exit_code == 0, result.output
    return {d["id"]: d for d in json.loads(result.output)}


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """The folder of the issue: subfolders with same-named files, an empty file, a binary file,
    a NUL-holding text file, a PDF, an HTML page and Markdown with headings and front matter."""
    notes = tmp_path / "notes"
    _write(notes / "lund.md", "# Lund\n\nLund is a city in Scania. Lund Cathedral was consecrated in 1145.\n")
    _write(notes / "travel" / "lund.md", "# Lund trip\n\nThe trip to Lund was in May. We took the train.\n")
    _write(notes / "people" / "ingrid.md",
           "---\nauthor: me\n---\n# Ingrid Halvorsen\n\nIngrid Halvorsen is a Norwegian physicist.\n\n"
           "## Career\n\nIngrid Halvorsen founded Lumora Instruments in 2004.\n")  # fmt: skip
    _write(notes / "empty.txt", "")
    (notes / "blob.bin").write_bytes(bytes(range(256)))
    (notes / "dump.txt").write_bytes(b"log\x00\x00\x01binary")
    shutil.copy(FIXTURES / "report.pdf", notes / "report.pdf")
    shutil.copy(FIXTURES / "page.html", notes / "page.html")
    _write(notes / ".git" / "config", "[core]\n")  # hidden: not a document, not even skipped
    return notes


def test_a_real_folder_ingests_every_good_file_and_names_every_bad_one(cli_env, folder: Path) -> None:
    result = run(cli_env, "ingest", str(folder))
    assert result.exit_code == 2, result.output
    out = result.output
    assert f"failed {folder}/empty.txt: is empty" in out
    assert f"failed {folder}/dump.txt: contains a NUL byte at byte 3" in out
    assert "1 file skipped" in out
    assert "skipped" in out and "blob.bin: unsupported type .bin" in out
    assert ".git" not in out
    docs = _documents(cli_env)
    done = {i for i, d in docs.items() if d["status"] == "done"}
    assert done == {"notes/lund.md", "notes/travel/lund.md", "notes/people/ingrid.md",
                    "notes/report.pdf", "notes/page.html"}  # fmt: skip
    failed = {i: d["error"] for i, d in docs.items() if d["status"] == "failed"}
    assert set(failed) == {"notes/empty.txt", "notes/dump.txt"}
    assert "empty" in failed["notes/empty.txt"] and "NUL byte" in failed["notes/dump.txt"]

    answer = run(
        cli_env, "ask", "In which year did the Lumora spectrometer plant open?", "-s", "dense", "--json"
    )
    assert answer.exit_code == 0, answer.output
    evidence = json.loads(answer.output)["evidence"]
    assert evidence[0]["doc_id"] == "notes/report.pdf" and "2011" in evidence[0]["text"]

    # fixed files ingest on the next run; the rest is unchanged
    _write(folder / "empty.txt", "Now the file has text about Malmo.")
    (folder / "dump.txt").unlink()
    again = run(cli_env, "ingest", str(folder))
    assert again.exit_code == 0, again.output
    assert "1 ingested, 5 unchanged, 0 failed" in again.output
    assert _documents(cli_env)["notes/empty.txt"]["status"] == "done"


def test_same_named_files_never_replace_each_other(cli_env, tmp_path: Path) -> None:
    _write(tmp_path / "notes" / "lund.md", "Lund is a city in Scania.\n")
    _write(tmp_path / "other" / "lund.md", "Lund University was founded in 1666.\n")
    assert run(cli_env, "ingest", str(tmp_path / "notes")).exit_code == 0
    single = run(cli_env, "ingest", str(tmp_path / "other" / "lund.md"))
    assert single.exit_code == 0 and "replaced" in single.output and "(0 replaced)" in single.output
    docs = _documents(cli_env)
    assert len(docs) == 2 and all(d["status"] == "done" for d in docs.values())

    # the same file named another way (another working directory) is the same document
    cwd = os.getcwd()
    os.chdir(tmp_path / "notes")
    try:
        same = run(cli_env, "ingest", "lund.md")
    finally:
        os.chdir(cwd)
    assert same.exit_code == 0 and "0 ingested, 1 unchanged" in same.output
    assert len(_documents(cli_env)) == 2

    # a second folder of the same name elsewhere keeps its own documents, with a note
    _write(tmp_path / "elsewhere" / "notes" / "lund.md", "Lund has a botanical garden.\n")
    second = run(cli_env, "ingest", str(tmp_path / "elsewhere" / "notes"))
    assert second.exit_code == 0 and "note:" in second.output and "already names" in second.output
    docs = _documents(cli_env)
    assert len(docs) == 3 and "notes/lund.md" in docs
    assert any(i.startswith("notes/lund.md~") for i in docs)


def test_a_moved_folder_keeps_its_documents(cli_env, tmp_path: Path) -> None:
    _write(tmp_path / "a" / "notes" / "x.md", "Xylophones are percussion instruments.\n")
    assert run(cli_env, "ingest", str(tmp_path / "a" / "notes")).exit_code == 0
    (tmp_path / "b").mkdir()
    shutil.move(tmp_path / "a" / "notes", tmp_path / "b" / "notes")
    moved = run(cli_env, "ingest", str(tmp_path / "b" / "notes"))
    assert (
        moved.exit_code == 0 and "0 ingested, 1 unchanged" in moved.output and "takes its id" in moved.output
    )
    assert list(_documents(cli_env)) == ["notes/x.md"]


def test_a_memory_made_with_base_name_ids_is_recognised_not_duplicated(
    memory: Memory, tmp_path: Path, monkeypatch
) -> None:
    """Built as the earlier loader did (id = base name or path below the folder, no path stored):
    the same files ingested again join their documents; nothing is duplicated or lost."""
    notes = tmp_path / "notes"
    _write(notes / "sub" / "uppsala.txt", "Uppsala is a city in Sweden.\n")
    _write(notes / "lund.md", "Lund is a city in Scania.\n")
    _write(tmp_path / "other" / "lund.md", "Lund University was founded in 1666.\n")
    monkeypatch.chdir(tmp_path)
    legacy = [
        make_document("Uppsala is a city in Sweden.\n", title="uppsala", id="sub/uppsala.txt",
                      source="notes/sub/uppsala.txt"),
        # the old bug: other/lund.md replaced notes/lund.md under the id 'lund.md'
        make_document("Lund University was founded in 1666.\n", title="lund", id="lund.md", source="other/lund.md"),
    ]  # fmt: skip
    memory.ingest(legacy)
    report = memory.ingest(Path("notes"))
    assert (report.ingested, report.skipped, report.failed) == (
        1,
        1,
        0,
    )  # uppsala unchanged; notes/lund.md new
    memory.ingest(Path("other/lund.md"))
    ids = {d["id"] for d in memory.documents()}
    assert ids == {"sub/uppsala.txt", "lund.md", "notes/lund.md"}
    again = memory.ingest(Path("notes"))
    assert again.skipped == 2 and again.ingested == 0
    assert {d["id"] for d in memory.documents()} == ids


def test_strict_ingests_nothing_and_names_every_bad_file(cli_env, folder: Path) -> None:
    result = run(cli_env, "ingest", str(folder), "--strict")
    assert result.exit_code == 1
    assert "2 files could not be read, nothing was ingested" in result.output
    assert "empty.txt" in result.output and "dump.txt" in result.output
    assert _documents(cli_env) == {}


def test_a_file_named_directly_must_be_of_a_supported_type(cli_env, tmp_path: Path) -> None:
    blob = _write(tmp_path / "notes.bin", "Plain words about Oslo.\n")
    refused = run(cli_env, "ingest", str(blob))
    assert refused.exit_code == 1 and "unsupported file type .bin" in refused.output
    assert ".md" in refused.output and ".pdf" in refused.output and "--as-text" in refused.output
    assert _documents(cli_env) == {}
    forced = run(cli_env, "ingest", str(blob), "--as-text")
    assert forced.exit_code == 0 and "1 ingested" in forced.output


def test_stdin_gets_a_title_and_may_be_named(cli_env) -> None:
    text = "Oslo is the capital of Norway. It lies at the head of the Oslofjord.\n"
    assert run(cli_env, "ingest", "-", input=text).exit_code == 0
    (doc,) = _documents(cli_env).values()
    assert doc["title"] == "Oslo is the capital of Norway. It lies at the head of the Oslofjord."
    assert doc["id"].startswith("doc-")
    named = run(cli_env, "ingest", "-", "--title", "Bergen", "--id", "bergen-note",
                input="Bergen is a city on the west coast.\n")  # fmt: skip
    assert named.exit_code == 0
    assert _documents(cli_env)["bergen-note"]["title"] == "Bergen"


def test_hostile_input_gives_one_clear_error_and_writes_nothing(cli_env, tmp_path: Path) -> None:
    surrogate = _write(tmp_path / "corpus.json", '[{"title": "A", "text": "bad \\ud800 text"}]')
    result = run(cli_env, "ingest", str(surrogate))
    assert result.exit_code == 1 and "lone surrogate U+D800" in result.output
    assert "Traceback" not in result.output

    number = _write(tmp_path / "n.json", '[{"title": "A", "text": 42}]')
    result = run(cli_env, "ingest", str(number))
    assert result.exit_code == 1 and "'text' must be a string, got a number" in result.output

    result = run(cli_env, "ingest", "-", input=b"caf\xe9 au lait\n")
    assert result.exit_code == 1 and "stdin is not UTF-8 text" in result.output and "0xe9" in result.output
    assert _documents(cli_env) == {}


def test_a_file_name_that_is_not_utf8_is_ingested_under_an_escaped_id(memory: Memory, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    name = os.fsdecode(b"caf\xe9.txt")
    (folder / name).write_text("The cafe sells coffee in Lund.\n")
    report = memory.ingest(folder)
    assert report.ingested == 1
    (doc,) = memory.documents()
    assert doc["id"] == "notes/caf\\xe9.txt"


def test_sdk_ingest_of_a_folder_reports_failures_and_skips(memory: Memory, folder: Path) -> None:
    report = memory.ingest(folder)
    assert report.failed == 2 and report.ingested == 5
    assert any("blob.bin" in path for path, _ in report.skipped_files)
    with pytest.raises(InputError, match="could not be read, nothing was ingested"):
        memory.ingest(folder, strict=True)

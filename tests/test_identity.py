"""Which stored document a file is (ingestion/identity.py), without a graph: the rules alone."""

from __future__ import annotations

from engramdb.ingestion.identity import FileIdentity, StoredDocument, disambiguated, resolve


def _file(wanted: str, path: str, source: str | None = None, content_hash: str = "h") -> FileIdentity:
    return FileIdentity(wanted, path, source or wanted, content_hash)


def test_a_file_is_found_by_its_path_whatever_id_it_was_given() -> None:
    stored = StoredDocument("sub/lund.md", "/home/u/notes/sub/lund.md", "notes/sub/lund.md", "h")
    (res,) = resolve([_file("lund.md", "/home/u/notes/sub/lund.md")], {stored.path: stored}, {}, [])
    assert res.id == "sub/lund.md" and not res.store_path and res.note is None


def test_another_file_wanting_a_taken_id_gets_a_suffix_and_a_note() -> None:
    holder = StoredDocument("notes/lund.md", "/a/notes/lund.md", "/a/notes/lund.md", "h1")
    new = _file("notes/lund.md", "/b/notes/lund.md", content_hash="h2")
    (res,) = resolve([new], {}, {holder.id: holder}, [], exists=lambda p: True)
    assert res.id == disambiguated("notes/lund.md", "/b/notes/lund.md") != "notes/lund.md"
    assert res.id.startswith("notes/lund.md~") and "/a/notes/lund.md" in (res.note or "")
    again = resolve([new], {}, {holder.id: holder}, [], exists=lambda p: True)[0]
    assert again.id == res.id  # stable: the same file gets the same id next time


def test_a_moved_folder_takes_its_documents_over() -> None:
    holder = StoredDocument("notes/lund.md", "/old/notes/lund.md", "/old/notes/lund.md", "h")
    (res,) = resolve([_file("notes/lund.md", "/new/notes/lund.md")], {}, {holder.id: holder}, [],
                     exists=lambda p: False)  # fmt: skip
    assert res.id == "notes/lund.md" and res.store_path


def test_a_document_stored_with_a_base_name_id_is_adopted_by_its_source() -> None:
    legacy = StoredDocument("sub/uppsala.txt", None, "notes/sub/uppsala.txt", "old-hash")
    f = _file("notes/sub/uppsala.txt", "/w/notes/sub/uppsala.txt", source="notes/sub/uppsala.txt")
    (res,) = resolve([f], {}, {}, [legacy])
    assert res.id == "sub/uppsala.txt" and res.store_path


def test_a_base_name_id_of_another_existing_file_is_not_adopted() -> None:
    # the old bug's aftermath: 'lund.md' holds other/lund.md; notes/lund.md is a different file
    legacy = StoredDocument("lund.md", None, "/w/other/lund.md", "h-other")
    f = _file("notes/lund.md", "/w/notes/lund.md", source="notes/lund.md", content_hash="h-notes")
    (res,) = resolve([f], {}, {}, [legacy], exists=lambda p: True)
    assert res.id == "notes/lund.md" and not res.store_path


def test_same_content_and_name_adopts_a_legacy_document_from_another_working_directory() -> None:
    legacy = StoredDocument("lund.md", None, "lund.md", "same")
    f = _file("notes/lund.md", "/w/notes/lund.md", source="notes/lund.md", content_hash="same")
    (res,) = resolve([f], {}, {}, [legacy], exists=lambda p: False)
    assert res.id == "lund.md" and res.store_path


def test_a_legacy_holder_of_the_wanted_id_that_is_another_file_is_never_overwritten() -> None:
    holder = StoredDocument("lund.md", None, "/w/notes/lund.md", "h-notes")
    f = _file("lund.md", "/w/other/lund.md", source="lund.md", content_hash="h-other")
    (res,) = resolve([f], {}, {holder.id: holder}, [holder], exists=lambda p: True)
    assert res.id != "lund.md" and res.id.startswith("lund.md~")


def test_two_files_of_one_ingest_wanting_one_id_both_keep_a_document() -> None:
    a, b = _file("x.md", "/1/x.md"), _file("x.md", "/2/x.md")
    ids = [r.id for r in resolve([a, b], {}, {}, [])]
    assert ids[0] == "x.md" and ids[1].startswith("x.md~") and len(set(ids)) == 2

"""The click CLI end to end against the session's real Neo4j (as a configured server)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from engramdb.platform.interfaces.cli import main


def run(env: dict[str, str], *args: str, input: str | None = None):
    return CliRunner().invoke(main, list(args), env=env, input=input, catch_exceptions=False)


def test_config_show_masks_secrets(cli_env) -> None:
    result = run({**cli_env, "VOYAGE_API_KEY": "vk-secret-value"}, "config", "show", "--json")
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert data["voyage_api_key"] == "********" and data["neo4j_password"] == "********"
    assert "vk-secret-value" not in result.output and cli_env["ENGRAMDB_NEO4J_PASSWORD"] not in result.output


def test_config_file_is_read_and_bad_values_are_named(cli_env, tmp_path: Path) -> None:
    config = tmp_path / "engramdb.toml"
    config.write_text('namespace = "from-file"\nneo4j_heap = "2g"\n')
    env = {**cli_env, "ENGRAMDB_CONFIG": str(config)}
    del env["ENGRAMDB_NAMESPACE"]
    data = json.loads(run(env, "config", "show", "--json").output)
    assert data["namespace"] == "from-file" and data["neo4j_heap"] == "2g"
    bad = run({**cli_env, "ENGRAMDB_NEO4J_HEAP": "lots"}, "config", "show")
    assert bad.exit_code == 1 and "neo4j_heap" in bad.output


def test_ingest_stats_ask_delete_round_trip(cli_env, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "curie.md").write_text(
        "# Marie Curie\n\nMarie Curie was born in Warsaw. She won the Nobel Prize in 1903.\n"
    )
    (folder / "warsaw.txt").write_text("Warsaw is the capital of Poland.")
    result = run(cli_env, "ingest", str(folder))
    assert result.exit_code == 0, result.output
    assert "2 ingested" in result.output
    # one row per document and one per chunk written (the only thing that moves inside a long document)
    assert re.search(r"documents .* 2/2", result.output) and re.search(r"chunks .* 2/2", result.output)
    stats = json.loads(run(cli_env, "stats", "--json").output)
    assert stats["documents"] == 2 and stats["qa_pairs"] == stats["qa_vectors"] > 0

    again = run(cli_env, "ingest", str(folder))
    assert "0 ingested, 2 unchanged" in again.output

    answer = run(cli_env, "ask", "Where was Marie Curie born?", "--json")
    assert answer.exit_code == 0
    data = json.loads(answer.output)
    assert data["answer"] == "Warsaw" and data["citations"][0]["doc_id"] == "notes/curie.md"

    traced = run(cli_env, "ask", "Where was Marie Curie born?", "--trace")
    assert "hop 1" in traced.output and "kept" in traced.output

    deleted = run(cli_env, "delete", "notes/curie.md")
    assert deleted.exit_code == 0 and "deleted notes/curie.md" in deleted.output
    assert re.search(r"kept in \d+\.\d s \(.*graph \d+\.\d s", deleted.output)  # where the time went
    assert json.loads(run(cli_env, "stats", "--json").output)["documents"] == 1
    missing = run(cli_env, "delete", "notes/curie.md")
    assert missing.exit_code == 1 and "no document 'notes/curie.md'" in missing.output


def test_ingest_from_stdin_and_clear_errors(cli_env, tmp_path: Path) -> None:
    ok = run(
        cli_env,
        "ingest",
        "-",
        input=json.dumps([{"title": "Oslo", "text": "Oslo is the capital of Norway."}]),
    )
    assert ok.exit_code == 0 and "1 ingested" in ok.output
    bad = run(cli_env, "ingest", str(tmp_path / "nope.json"))
    assert bad.exit_code == 1 and "no such file or folder" in bad.output
    weird = tmp_path / "data.csv"
    weird.write_text("a,b")
    unsupported = run(cli_env, "ingest", str(weird))
    assert unsupported.exit_code == 1 and "unsupported file type .csv" in unsupported.output
    bad_ns = run({**cli_env, "ENGRAMDB_NAMESPACE": "bad namespace!"}, "stats")
    assert bad_ns.exit_code == 1 and "invalid namespace" in bad_ns.output


def test_eval_prints_table_and_writes_report(shared_file, cli_env, tmp_path: Path) -> None:
    dataset = shared_file("data/musique/questions.json")  # first: missing data skips before Neo4j starts
    out = tmp_path / "eval"
    from engramdb.retrieval.strategy import strategy_names

    result = run(cli_env, "eval", str(dataset), "--limit", "2", "--out", str(out))
    assert result.exit_code == 0, result.output
    names = strategy_names()  # no --strategy: every registered strategy, baselines included
    assert {"chain", "bm25", "dense"} <= set(names)
    for name in names:
        assert f"| {name} |" in result.output
    report = json.loads((out / "results.json").read_text())
    rows = [r["strategy"] for r in report["summary"]]  # passage baselines also run at top-1, 2 and 3
    assert [row for row in rows if "@" not in row] == names
    assert {f"{b}@{k}" for b in ("bm25", "dense") for k in (1, 2, 3)} <= set(rows)
    assert len(report["records"]) == 2 * len(rows) and report["meta"]["decomposition"] == "gold"
    picked = run(cli_env, "eval", str(dataset), "--limit", "1", "-s", "dense", "--out", str(tmp_path / "d"))
    assert picked.exit_code == 0 and "| dense |" in picked.output and "| chain |" not in picked.output
    unknown = run(cli_env, "eval", str(dataset), "-s", "colbert", "--out", str(tmp_path / "x"))
    assert unknown.exit_code == 1 and "unknown strategy 'colbert'; known strategies: chain" in unknown.output
    assert (out / "quality_vs_tokens.png").stat().st_size > 1000 and (out / "latency.png").is_file()
    assert "| strategy |" in (out / "summary.md").read_text()


def test_neo4j_commands_refuse_an_external_server(cli_env) -> None:
    result = run(cli_env, "neo4j", "stop")
    assert result.exit_code == 1 and "external Neo4j is configured" in result.output
    status = run(cli_env, "neo4j", "status")
    assert status.exit_code == 0 and "external Neo4j configured" in status.output


def test_trace_shows_bracketed_answers_literally(cli_env) -> None:
    text = "Brand is a verse tragedy [play] by Henrik Ibsen. Henrik Ibsen was a citizen of Norway."
    assert run(cli_env, "ingest", "-", input=json.dumps([{"title": "Brand", "text": text}])).exit_code == 0
    traced = run(cli_env, "ask", "Who wrote Brand?", "--trace")
    assert traced.exit_code == 0
    assert "[Henrik Ibsen]" in traced.output  # chain summaries keep their brackets (no markup eaten)


def test_ids_titles_and_errors_with_markup_are_printed_literally(cli_env) -> None:
    docs = [{"id": "[/]", "title": "[bold]Oslo", "text": "Oslo is the capital of Norway."},
            {"id": "[bold]x", "title": "Bergen", "text": "Bergen is a city in Norway."}]  # fmt: skip
    assert run(cli_env, "ingest", "-", input=json.dumps(docs)).exit_code == 0
    listing = run({**cli_env, "COLUMNS": "200"}, "documents")
    assert "[/]" in listing.output and "[bold]Oslo" in listing.output and "[bold]x" in listing.output

    deleted = run(cli_env, "delete", "[/]")
    assert deleted.exit_code == 0 and "deleted [/]:" in deleted.output
    missing = run(cli_env, "delete", "[/]", "[bold]x", "[red]nope")
    assert missing.exit_code == 1
    assert "error: no documents '[/]', '[red]nope' in namespace" in missing.output
    assert "none of the 3 documents was deleted" in missing.output
    assert run(cli_env, "delete", "[bold]x").exit_code == 0  # all or none: it was kept above

    bad_ns = run({**cli_env, "ENGRAMDB_NAMESPACE": "[/]"}, "stats")
    assert bad_ns.exit_code == 1 and "invalid namespace '[/]'" in bad_ns.output


def test_paths_and_homes_with_markup_are_printed_literally(cli_env, tmp_path: Path) -> None:
    bad = run(cli_env, "ingest", "/nonexistent/[/x]")
    assert bad.exit_code == 1 and "error: no such file or folder: /nonexistent/[/x]" in bad.output
    home = tmp_path / "[/]" / "[bold]home"
    shown = run({**cli_env, "ENGRAMDB_HOME": str(home)}, "config", "show")
    assert shown.exit_code == 0 and f"home                     {home}" in shown.output
    local = {**cli_env, "ENGRAMDB_HOME": str(home), "ENGRAMDB_NEO4J_URI": None}
    status = run(local, "neo4j", "status")  # a home with no server: "not running" (exit 3)
    assert status.exit_code == 3 and f"home:      {home}" in status.output
    assert not home.exists()  # looking did not create the home

"""Settings: namespace validation, the autostart switch, where the Neo4j jars live."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from engramdb.platform.config import Settings, validate_namespace


@pytest.mark.parametrize("bad", ["ns\n", "ns\r\n", "\nns", "ns\x00", "", "-ns", "x" * 65, "a b", "a:b"])
def test_namespace_rejects_anything_but_the_plain_pattern(bad: str) -> None:
    with pytest.raises(ValueError, match="invalid namespace"):
        validate_namespace(bad)


def test_namespace_with_a_trailing_newline_is_refused_by_the_settings_too() -> None:
    with pytest.raises(ValidationError, match="invalid namespace"):
        Settings(namespace="wiki\n")


@pytest.mark.parametrize("good", ["a", "wiki", "t0123abc", "my.ns-1_x", "x" * 64])
def test_namespace_accepts_plain_names(good: str) -> None:
    assert validate_namespace(good) == good


def test_neo4j_autostart_defaults_on_and_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().neo4j_autostart is True
    monkeypatch.setenv("ENGRAMDB_NEO4J_AUTOSTART", "false")
    assert Settings().neo4j_autostart is False
    monkeypatch.setenv("ENGRAMDB_NEO4J_AUTOSTART", "maybe")
    with pytest.raises(ValidationError, match="neo4j_autostart"):
        Settings()


def test_neo4j_jars_default_to_one_per_user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("ENGRAMDB_NEO4J_LIB_DIR", raising=False)
    one = Settings(home=tmp_path / "one", neo4j_version="5.26.30")
    two = Settings(home=tmp_path / "two", neo4j_version="5.26.30")
    expected = tmp_path / "cache" / "engramdb" / "neo4j-5.26.30" / "lib"
    assert one.neo4j_jars == two.neo4j_jars == expected
    assert Settings(home=tmp_path, neo4j_version="5.26.31").neo4j_jars.parent.name == "neo4j-5.26.31"
    assert Settings(home=tmp_path, neo4j_lib_dir=tmp_path / "jars").neo4j_jars == tmp_path / "jars"

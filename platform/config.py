"""Settings from environment variables and an optional TOML file.

Precedence (highest first): keyword arguments, ``ENGRAMDB_*`` environment
variables, the TOML file, defaults. The TOML file is ``$ENGRAMDB_CONFIG`` if
set (``none`` disables the file), else ``./engramdb.toml`` if present, else ``<user config dir>/config.toml``.
API keys also honour their conventional names (``VOYAGE_API_KEY``, ...).
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import Any

import platformdirs
from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from engramdb.platform.errors import ConfigError

NAMESPACE_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
#: The ceiling on an `engramdb cypher` timeout unless configured (``cypher_max_timeout``).
DEFAULT_CYPHER_MAX_TIMEOUT = 300.0


def config_file_path() -> Path | None:
    """The TOML file settings are read from, or None when there is none."""
    explicit = os.environ.get("ENGRAMDB_CONFIG")
    if explicit and explicit.lower() == "none":
        return None
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise ConfigError(f"ENGRAMDB_CONFIG names {path}, which is not a file")
        return path
    local = Path.cwd() / "engramdb.toml"
    if local.is_file():
        return local
    user = Path(platformdirs.user_config_dir("engramdb")) / "config.toml"
    return user if user.is_file() else None


def validate_namespace(namespace: str) -> str:
    """Namespaces key every node and vector, so they must be short and plain.

    ``fullmatch``, not ``match`` with ``$``: ``$`` also matches before a trailing
    newline, which would let ``"ns\\n"`` through as a distinct namespace.
    """
    if not isinstance(namespace, str) or not NAMESPACE_PATTERN.fullmatch(namespace):
        raise ValueError(
            f"invalid namespace {namespace!r}: use 1-64 letters, digits, '_', '-' or '.', "
            "starting with a letter or digit"
        )
    return namespace


def _key(name: str) -> AliasChoices:
    return AliasChoices(f"ENGRAMDB_{name}", name)


class Settings(BaseSettings):
    """Everything engramdb can be configured with; see ``engramdb config show``."""

    model_config = SettingsConfigDict(
        env_prefix="ENGRAMDB_", extra="forbid", populate_by_name=True, env_nested_delimiter="__"
    )

    home: Path = Field(
        default_factory=lambda: Path(platformdirs.user_data_dir("engramdb")),
        description="Data home: Neo4j server files, embedded Qdrant, caches.",
    )
    namespace: str = Field("default", description="Memory namespace used when none is given.")

    # Neo4j: an external server when neo4j_uri is set, else the local one.
    neo4j_uri: str | None = Field(None, description="Bolt URI of an external Neo4j (Aura, Docker, cluster).")
    neo4j_user: str = "neo4j"
    neo4j_password: SecretStr | None = None
    neo4j_database: str = "neo4j"
    neo4j_version: str = "5.26.30"
    neo4j_browser_version: str = "5.24.0"
    neo4j_bolt_port: int = Field(7687, ge=1, le=65535)
    neo4j_http_port: int = Field(7474, ge=1, le=65535)
    neo4j_heap: str = Field("1g", pattern=r"^\d+[mMgG]$")
    neo4j_pagecache: str = Field("512m", pattern=r"^\d+[mMgG]$")
    neo4j_jvm_options: str = Field(
        "",
        description="Extra JVM options of the local Neo4j, split like a shell line (e.g. "
        "'-XX:TieredStopAtLevel=1': the JIT's quick tier only, less CPU for short ingests on few cores, "
        "slower large transactions; README, 'Measured here').",
    )
    neo4j_start_timeout: float = Field(180.0, gt=0)
    neo4j_lib_dir: Path | None = Field(
        None,
        description="Where the Neo4j jars live (default: one copy per user, <user cache dir>/neo4j-<version>/lib).",
    )
    neo4j_autostart: bool = Field(
        True, description="Start the local Neo4j when the SDK needs it and none runs (it keeps running)."
    )
    java_home: Path | None = None

    # Qdrant: a server when qdrant_url is set, else the embedded engine.
    qdrant_url: str | None = None
    qdrant_api_key: SecretStr | None = Field(None, validation_alias=_key("QDRANT_API_KEY"))

    # Models.
    embedder: str = Field("offline", description="'offline' or 'voyage:<model>'.")
    llm: str | None = Field(
        None,
        description="'<provider>:<model>': openai, anthropic, ollama (local) or openai-compatible (vLLM, llama.cpp).",
    )
    llm_base_url: str | None = Field(None, description="Server URL for ollama / openai-compatible models.")
    llm_concurrency: int = Field(4, ge=1, le=64, description="Parallel LLM calls during ingestion.")
    llm_repair_pass: bool = Field(False, description="Second LLM pass that completes each extracted GSW.")
    ingest_batch_size: int = Field(64, ge=1, le=5000, description="Documents per write transaction.")
    ingest_claim_seconds: float = Field(
        900.0,
        gt=0,
        le=86_400,
        description="Lease of a writer's claim on a document it ingests (renewed per part); a claim of a "
        "writer that died on another host ends after this.",
    )
    entity_merge_threshold: float = Field(
        0.85,
        ge=0.0,
        le=1.0,
        description="Name-embedding cosine above which a spelling variant joins an entity (1 = off).",
    )
    voyage_api_key: SecretStr | None = Field(None, validation_alias=_key("VOYAGE_API_KEY"))
    openai_api_key: SecretStr | None = Field(None, validation_alias=_key("OPENAI_API_KEY"))
    anthropic_api_key: SecretStr | None = Field(None, validation_alias=_key("ANTHROPIC_API_KEY"))

    analyst_row_limit: int = Field(
        100, ge=1, le=100_000, description="Rows `engramdb cypher` prints at most (--limit overrides)."
    )
    analyst_timeout: float = Field(
        30.0,
        gt=0,
        le=3600,
        description="Seconds an `engramdb cypher` query may run before the server stops it (--timeout overrides).",
    )
    cypher_max_timeout: float = Field(
        DEFAULT_CYPHER_MAX_TIMEOUT,
        gt=0,
        allow_inf_nan=False,
        description="Ceiling on an `engramdb cypher` query's seconds: a larger --timeout is clamped to it.",
    )

    # `engramdb serve`: the REST API.
    server_max_body_bytes: int = Field(
        10 * 1024 * 1024,
        ge=1024,
        description="Largest request body `engramdb serve` accepts, in bytes; a larger one gets 413.",
    )
    server_workers: int = Field(
        4, ge=1, le=64, description="Threads `engramdb serve` runs asks, listings and Cypher on."
    )
    server_shutdown_grace: float = Field(
        60.0,
        ge=0,
        le=3600,
        allow_inf_nan=False,
        description="Seconds a stopping `engramdb serve` waits for the running write to reach a safe point.",
    )

    stages: list[str] | None = Field(
        None,
        description="Memory stages run on ingest (default: every registered stage; [] for the GSW only).",
    )
    ask: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Per-strategy recipe overrides: [ask.chain] beam_width = 8, or ENGRAMDB_ASK__CHAIN__BEAM_WIDTH=8.",
    )

    @field_validator("namespace")
    @classmethod
    def _check_namespace(cls, value: str) -> str:
        return validate_namespace(value)

    @field_validator("neo4j_jvm_options")
    @classmethod
    def _check_jvm_options(cls, value: str) -> str:
        try:
            options = shlex.split(value)
        except ValueError as exc:  # an unbalanced quote: say so now, not as a server that will not start
            raise ValueError(f"neo4j_jvm_options {value!r} cannot be split into options: {exc}") from None
        stray = [o for o in options if not o.startswith("-")]
        if stray:
            raise ValueError(f"neo4j_jvm_options must be JVM options starting with '-'; not {stray}")
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        path = config_file_path()
        if path is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=path))
        return tuple(sources)

    # Derived locations -------------------------------------------------
    @property
    def neo4j_home(self) -> Path:
        return self.home / "neo4j"

    @property
    def neo4j_jars(self) -> Path:
        """The configured jar folder, else the per-user cache shared by every data home.

        The jars (~137 MB) depend only on the Neo4j version, so one copy per
        user serves every home; see ``LocalNeo4j`` for the older per-home copy.
        """
        return self.neo4j_lib_dir or (
            Path(platformdirs.user_cache_dir("engramdb")) / f"neo4j-{self.neo4j_version}" / "lib"
        )

    @property
    def qdrant_path(self) -> Path:
        return self.home / "qdrant"

    @property
    def cache_dir(self) -> Path:
        return self.home / "cache"

    @property
    def uses_local_neo4j(self) -> bool:
        return not self.neo4j_uri

    def masked(self) -> dict[str, Any]:
        """Settings as plain values with every secret replaced by a mask."""
        out: dict[str, Any] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, SecretStr):
                out[name] = "********" if value.get_secret_value() else ""
            elif isinstance(value, Path):
                out[name] = str(value)
            else:
                out[name] = value
        out["config_file"] = str(config_file_path() or "")
        return out

"""Settings: defaults, then the config file, then environment variables, then CLI flags."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agent.locations import check_profile_name, config_file

MemoryName = Literal["none", "history", "chunks", "facts"]
WriterName = Literal["rules", "llm"]
GateMode = Literal["strict", "paper"]


class SettingsError(ValueError):
    """A setting has a bad value; the message names the source and the field."""


class Settings(BaseModel):
    """Every run-time setting of the agent. Field docs are shown in the README."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    model: str = Field("reference", description="litellm model string, or `reference`")
    memory: MemoryName = Field("chunks", description="memory mode")
    gl: bool = Field(True, description="Grounding Layer on/off")
    profile: str = Field("default", description="profile name (own ledger, memory, sessions)")
    ledger_writer: WriterName = Field("rules", description="grounding-act classifier")
    gate_mode: GateMode = Field("strict", description="strict (deny by default) or paper")
    api_base: str | None = Field(None, description="OpenAI-compatible server URL")
    api_key: str | None = Field(None, description="API key for api_base")
    chroma_url: str | None = Field(None, description="Chroma server http://host:port")
    timeout: float = Field(60.0, gt=0, description="seconds per model call")
    llm_cache: bool = Field(False, description="cache model responses on disk")
    max_tool_steps: int = Field(8, ge=1, le=20, description="tool steps per turn")

    @field_validator("profile")
    @classmethod
    def _profile_is_a_safe_name(cls, value: str) -> str:
        return check_profile_name(value)


ENV_PREFIX = "GROUNDING_"


def env_name(field: str) -> str:
    return ENV_PREFIX + field.upper()


def _read_file(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{path}: not valid TOML: {exc}") from exc
    unknown = set(data) - set(Settings.model_fields)
    if unknown:
        raise SettingsError(f"{path}: unknown setting(s): {', '.join(sorted(unknown))}")
    return data


def _read_env() -> dict[str, Any]:
    values: dict[str, Any] = {}
    for field in Settings.model_fields:
        raw = os.environ.get(env_name(field))
        if raw is not None and raw != "":
            values[field] = raw
    return values


def load_settings(overrides: dict[str, Any] | None = None, path: Path | None = None) -> Settings:
    """Merge defaults, config file, environment and explicit overrides (CLI flags)."""
    merged: dict[str, Any] = {}
    sources: dict[str, str] = {}
    file_path = path or config_file()
    for source, values in (
        (str(file_path), _read_file(file_path)),
        ("environment", _read_env()),
        ("command line", {k: v for k, v in (overrides or {}).items() if v is not None}),
    ):
        for key, value in values.items():
            merged[key] = value
            sources[key] = source
    try:
        return Settings(**merged)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = str(err["loc"][0]) if err["loc"] else "?"
        where = sources.get(field, "settings")
        raise SettingsError(f"{where}: {field}: {err['msg']}") from exc
    except ValueError as exc:
        raise SettingsError(str(exc)) from exc


def describe_settings() -> list[tuple[str, str, str, str]]:
    """(name, env var, default, description) for every setting: for help and docs."""
    rows = []
    for name, field in Settings.model_fields.items():
        rows.append((name, env_name(name), repr(field.default), field.description or ""))
    return rows

"""One place for every directory the product uses.

`GROUNDING_HOME` moves all of them (tests point it at a temp dir); otherwise the
platform's user directories are used.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import platformdirs

APP_NAME = "grounding"
HOME_ENV = "GROUNDING_HOME"
_PROFILE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def _home() -> Path | None:
    value = os.environ.get(HOME_ENV)
    return Path(value).expanduser() if value else None


def config_dir() -> Path:
    home = _home()
    return home if home else Path(platformdirs.user_config_dir(APP_NAME))


def config_file() -> Path:
    return config_dir() / "config.toml"


def data_dir() -> Path:
    home = _home()
    return home / "data" if home else Path(platformdirs.user_data_dir(APP_NAME))


def cache_dir() -> Path:
    home = _home()
    return home / "cache" if home else Path(platformdirs.user_cache_dir(APP_NAME))


def check_profile_name(name: str) -> str:
    """Return the name if it is safe as a directory name, else raise ValueError."""
    if not _PROFILE_RE.match(name):
        raise ValueError(
            f"invalid profile name {name!r}: use letters, digits, '.', '_' or '-' (max 64)"
        )
    return name


def profile_dir(profile: str) -> Path:
    """The data directory of one profile (ledger, memory, sessions, world)."""
    path = data_dir() / "profiles" / check_profile_name(profile)
    path.mkdir(parents=True, exist_ok=True)
    return path

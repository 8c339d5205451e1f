"""Layers point one way: headless packages never load Textual; the CLI loads it lazily."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _loaded(code: str) -> set[str]:
    script = code + "\nimport sys\nprint(' '.join(sorted(m.split('.')[0] for m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


@pytest.mark.parametrize("package", ["ledger", "tools", "agent", "scenarios"])
def test_headless_package_does_not_import_textual(package: str) -> None:
    mods = _loaded(
        f"import {package}, pkgutil, importlib\n"
        f"for m in pkgutil.walk_packages({package}.__path__, '{package}.'):\n"
        f"    importlib.import_module(m.name)"
    )
    assert "textual" not in mods


def test_ledger_is_light() -> None:
    mods = _loaded(
        "import ledger, pkgutil, importlib\n"
        "for m in pkgutil.walk_packages(ledger.__path__, 'ledger.'):\n"
        "    importlib.import_module(m.name)"
    )
    assert not {"textual", "langgraph", "chromadb"} & mods


def test_cli_module_is_thin() -> None:
    mods = _loaded("import tui.cli")
    assert not {"textual", "litellm", "chromadb", "langgraph"} & mods

"""The `grounding` command line: help, version, settings precedence, offline start."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agent.settings import SettingsError, describe_settings, load_settings
from tests.conftest import ROOT, cli_env
from tui.cli import build_parser, main

GROUNDING = str(Path(sys.executable).parent / "grounding")


def test_help_lists_config_file_and_subcommands(grounding_home: Path) -> None:
    out = subprocess.run(
        [GROUNDING, "--help"], capture_output=True, text=True, env=cli_env(grounding_home)
    )
    assert out.returncode == 0
    assert str(grounding_home / "config.toml") in out.stdout.replace("\n", "")
    assert "chat" in out.stdout


def test_help_lists_only_registered_commands() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    names = set(sub.choices)  # type: ignore[arg-type]
    # every listed command has a handler that is not a placeholder
    for name in names:
        p = sub.choices[name]  # type: ignore[index]
        assert callable(p.get_default("handler")), name


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.startswith("grounding ")


def test_settings_precedence(grounding_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings().model == "reference"
    (grounding_home / "config.toml").write_text('model = "openai/from-file"\nmemory = "history"\n')
    s = load_settings()
    assert (s.model, s.memory) == ("openai/from-file", "history")
    monkeypatch.setenv("GROUNDING_MODEL", "openai/from-env")
    assert load_settings().model == "openai/from-env"
    assert load_settings({"model": "openai/from-flag"}).model == "openai/from-flag"
    assert load_settings({"model": None}).model == "openai/from-env"


def test_settings_errors_name_source_and_field(
    grounding_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (grounding_home / "config.toml").write_text("memory = 'everything'\n")
    with pytest.raises(SettingsError, match=r"config.toml: memory"):
        load_settings()
    (grounding_home / "config.toml").write_text("colour = 'blue'\n")
    with pytest.raises(SettingsError, match="unknown setting"):
        load_settings()
    (grounding_home / "config.toml").write_text("model = \n")
    with pytest.raises(SettingsError, match="not valid TOML"):
        load_settings()
    (grounding_home / "config.toml").unlink()
    monkeypatch.setenv("GROUNDING_GL", "maybe")
    with pytest.raises(SettingsError, match="environment: gl"):
        load_settings()
    monkeypatch.delenv("GROUNDING_GL")
    with pytest.raises(SettingsError, match="profile"):
        load_settings({"profile": "../etc"})


def test_bad_setting_is_a_clear_cli_error(grounding_home: Path) -> None:
    (grounding_home / "config.toml").write_text("timeout = -1\n")
    out = subprocess.run(
        [GROUNDING, "chat"], capture_output=True, text=True, env=cli_env(grounding_home)
    )
    assert out.returncode == 2
    assert "timeout" in out.stderr and "Traceback" not in out.stderr


def test_every_setting_has_env_var_and_is_documented() -> None:
    readme = (ROOT / "README.md").read_text()
    for name, env, _default, description in describe_settings():
        assert description
        assert env in readme, f"{env} missing from README configuration section"
        assert name


def test_no_network_on_import_and_cli(grounding_home: Path) -> None:
    """Import every heavy library and run the CLI with all non-loopback connects refused."""
    script = textwrap.dedent(
        """
        import socket, sys
        attempts = []
        real_connect = socket.socket.connect
        def guarded(self, address):
            host = address[0] if isinstance(address, tuple) else str(address)
            if host not in ("127.0.0.1", "::1", "localhost") and not str(host).startswith("/"):
                attempts.append(host)
                raise OSError("network disabled in test")
            return real_connect(self, address)
        socket.socket.connect = guarded
        real_gai = socket.getaddrinfo
        def gai(host, *a, **k):
            if host not in ("127.0.0.1", "::1", "localhost", None):
                attempts.append(host)
                raise socket.gaierror("network disabled in test")
            return real_gai(host, *a, **k)
        socket.getaddrinfo = gai
        import agent
        import litellm, chromadb
        from tui.cli import main
        try:
            main(["--help"])
        except SystemExit:
            pass
        print("ATTEMPTS", attempts, file=sys.stderr)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=cli_env(grounding_home),
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "ATTEMPTS []" in out.stderr, out.stderr
    assert "cost map" not in out.stderr.lower()

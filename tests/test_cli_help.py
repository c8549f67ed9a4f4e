"""Every geoask command and sub-command answers --help."""

from __future__ import annotations

import pytest
import typer.main
from typer.testing import CliRunner

from geoask.app.cli import SUBCOMMANDS, app, load_subcommand


def _command_paths(group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = [prefix]
    for name, command in getattr(group, "commands", {}).items():
        paths += _command_paths(command, (*prefix, name))
    return paths


PATHS = _command_paths(typer.main.get_command(app))


def test_expected_commands_exist():
    assert {("db", "up"), ("db", "down"), ("db", "status"), ("db", "load"),
            ("catalog", "show")} <= set(PATHS)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "geoask")
def test_help(path):
    result = CliRunner().invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_root_help_line_is_the_subcommands_own(name):
    """`geoask --help` lists sub-commands without importing them (SUBCOMMANDS)."""
    assert load_subcommand(name).help == SUBCOMMANDS[name][1]


def test_root_help_lists_every_subcommand_in_order():
    result = CliRunner().invoke(app, ["--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    positions = [result.output.index(f" {name} ") for name in SUBCOMMANDS]
    assert positions == sorted(positions)


def test_unknown_subcommand_is_a_usage_error():
    result = CliRunner().invoke(app, ["no-such-command"])
    assert result.exit_code == 2
    assert "No such command" in result.output


def test_python_dash_m_geoask_is_the_geoask_command():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "geoask", "--help"], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0 and "Usage:" in done.stdout and "ask" in done.stdout

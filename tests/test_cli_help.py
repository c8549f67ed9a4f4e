"""Every geoask command and sub-command answers --help."""

from __future__ import annotations

import pytest
import typer.main
from typer.testing import CliRunner

from geoask.cli import app


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

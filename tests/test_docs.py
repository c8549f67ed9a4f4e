"""README.md documents every setting and every command."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer.main

from geoask.app.cli import app
from geoask.settings import Settings, settings_table

README = (Path(__file__).parents[1] / "README.md").read_text()


@pytest.mark.parametrize("field", sorted(Settings.model_fields))
def test_every_setting_is_documented(field):
    assert f"`GEOASK_{field.upper()}`" in README
    assert Settings.model_fields[field].description, f"{field} has no description"


def test_settings_table_is_current():
    """README embeds `python -m geoask.settings` output verbatim; regenerate it when this fails."""
    assert settings_table() in README


def _leaf_commands(group, prefix=()):
    commands = getattr(group, "commands", None)
    if not commands:
        return [prefix]
    return [path for name, sub in commands.items() for path in _leaf_commands(sub, (*prefix, name))]


@pytest.mark.parametrize("path", _leaf_commands(typer.main.get_command(app)), ids=" ".join)
def test_every_command_is_documented(path):
    assert f"geoask {' '.join(path)}" in README

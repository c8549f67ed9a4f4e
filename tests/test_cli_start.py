"""A fast CLI start: ``geoask --help`` and ``geoask sql check`` import no heavy library.

Each case runs the console entry point (``geoask.app.cli.main``, as the ``geoask`` script does) in
a fresh interpreter and lists which of the heavy top-level packages ended up in ``sys.modules``.
Prefect, chromadb, geopandas and pydantic-ai are imported only by the commands that need them.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("prefect", "chromadb", "geopandas", "pydantic_ai")

PROBE = """
import json, sys
from geoask.app.cli import main
sys.argv = ["geoask", *json.loads(sys.argv[1])]
heavy = {heavy}
try:
    main()
except SystemExit:
    pass
print("\\nLOADED=" + json.dumps(sorted(h for h in heavy if h in sys.modules)))
"""


def _loaded_after(args: list[str], stdin: str = "") -> tuple[list[str], str]:
    code = PROBE.format(heavy=repr(HEAVY))
    done = subprocess.run([sys.executable, "-c", code, json.dumps(args)], input=stdin,
                          capture_output=True, text=True, timeout=120, check=False)
    marker = done.stdout.rpartition("LOADED=")
    assert marker[1], f"probe failed:\n{done.stdout}\n{done.stderr}"
    return json.loads(marker[2]), marker[0]


@pytest.mark.parametrize(("args", "stdin", "expected"), [
    (["--help"], "", "Usage:"),
    (["sql", "check", "-"], "SELECT 1\n", "SELECT 1"),
], ids=["help", "sql-check"])
def test_command_imports_no_heavy_library(args, stdin, expected):
    loaded, output = _loaded_after(args, stdin)
    assert expected in output
    assert loaded == [], f"geoask {' '.join(args)} imported {loaded}"


def test_importing_the_cli_imports_no_heavy_library():
    loaded, _ = _loaded_after(["--version-does-not-exist"])
    assert loaded == []


def test_probe_sees_a_heavy_import():
    """The probe is not blind: a command that runs a flow does import Prefect."""
    code = PROBE.format(heavy=repr(HEAVY)).replace("main()", "import prefect.main")
    done = subprocess.run([sys.executable, "-c", code, "[]"], capture_output=True, text=True,
                          timeout=120, check=False)
    assert 'LOADED=["prefect"]' in done.stdout, done.stderr

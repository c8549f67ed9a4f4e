"""The import structure: no cycle, and the core below the agents, tasks and flows.

The graph is read by ``scripts/import_graph.py`` (run it to print who imports whom).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "import_graph.py"
spec = importlib.util.spec_from_file_location("import_graph", SCRIPT)
assert spec and spec.loader
import_graph = importlib.util.module_from_spec(spec)
spec.loader.exec_module(import_graph)

GRAPH = import_graph.import_graph()
UPPER_ROOMS = ("agents", "tasks", "flows")
# Entry points and the benchmark harness drive agents and flows; the rest of geoask is core.
ENTRY_POINTS = ("geoask.cli", "geoask.ask_cli", "geoask.api", "geoask.service.", "geoask.bench.")


def test_no_import_cycle():
    assert import_graph.cycles(GRAPH) == []


def test_cycle_finder_finds_a_planted_cycle():
    planted = {**GRAPH, "geoask.errors": {*GRAPH["geoask.errors"], "geoask.settings"}}
    assert any({"geoask.errors", "geoask.settings"} <= set(component)
               for component in import_graph.cycles(planted))


@pytest.mark.parametrize("module", sorted(
    name for name in GRAPH
    if name.startswith("geoask") and not name.startswith(ENTRY_POINTS)
    and not name.endswith(".cli")
))
def test_core_module_imports_no_agent_task_or_flow(module):
    upward = sorted(t for t in GRAPH[module] if t.split(".")[0] in UPPER_ROOMS)
    assert upward == [], f"{module} reaches up to {upward}"


def test_graph_sees_known_imports():
    assert "geoask.sql.guard" in GRAPH["geoask.sql.step"]
    assert "geoask.composition" in GRAPH["tasks.services"]

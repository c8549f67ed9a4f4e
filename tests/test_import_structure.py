"""The import structure: no import cycle, type-only imports included; every package in a layer.

The layers themselves are import-linter's contract in ``pyproject.toml`` (``[tool.importlinter]``),
checked by ``lint-imports`` in ``make lint``. The graph here is read by ``scripts/import_graph.py``
(run it to print who imports whom and how many imports sit inside functions).
"""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "import_graph.py"
spec = importlib.util.spec_from_file_location("import_graph", SCRIPT)
assert spec and spec.loader
import_graph = importlib.util.module_from_spec(spec)
spec.loader.exec_module(import_graph)

GRAPH = import_graph.import_graph()
IMPORTLINTER = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]


def test_no_import_cycle():
    assert import_graph.cycles(GRAPH) == []


def test_cycle_finder_finds_a_planted_cycle():
    planted = {**GRAPH, "geoask.errors": {*GRAPH["geoask.errors"], "geoask.settings"}}
    assert any({"geoask.errors", "geoask.settings"} <= set(component)
               for component in import_graph.cycles(planted))


def test_graph_sees_function_local_and_type_only_imports():
    assert "geoask.sql.guard" in GRAPH["geoask.sql.step"]
    assert "geoask.run.composition" in GRAPH["tasks.question"]
    # under `if TYPE_CHECKING:` in geoask/maps/answer_map.py
    assert "geoask.vocabulary.artifacts" in GRAPH["geoask.maps.answer_map"]


def _layered() -> set[str]:
    (contract,) = [c for c in IMPORTLINTER["contracts"] if c["type"] == "layers"]
    return {name.strip() for layer in contract["layers"]
            for name in layer.replace("|", ":").split(":")}


def test_every_package_sits_in_a_layer():
    """A new geoask sub-package or top-level package cannot stay outside the layer contract."""
    packages = {f"geoask.{path.parent.name}" for path in (ROOT / "geoask").glob("*/__init__.py")}
    packages |= set(IMPORTLINTER["root_packages"]) - {"geoask"}
    flat = {f"geoask.{path.stem}" for path in (ROOT / "geoask").glob("*.py")
            if path.stem not in ("__init__", "__main__")}
    assert packages - {"geoask.vendor"} | flat <= _layered()

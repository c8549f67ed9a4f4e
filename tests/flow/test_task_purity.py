"""Tasks do not change the run's shared services: what a step produces comes back in its result.

Only the execution log (``services.recorder``, append-only) is written by tasks; the flow records
a step's artifacts in the registry and its reused refs (flows/stages.py).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TASKS = sorted((Path(__file__).resolve().parents[2] / "tasks").glob("*.py"))
MUTATORS = {"append", "extend", "add", "update", "insert", "pop", "clear", "remove",
            "setdefault", "discard"}
WRITABLE = {"recorder"}  # the execution log: tasks record events in it


def _services_path(node: ast.expr) -> list[str] | None:
    """``services.a.b`` -> ["a", "b"]; None when the chain is not rooted at ``services``."""
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    return list(reversed(names)) if isinstance(node, ast.Name) and node.id == "services" else None


def writes_to_services(source: str) -> list[str]:
    """Each place ``source`` assigns to or mutates an attribute of ``services`` (not the log)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in MUTATORS):
            targets = [node.func.value]
        for target in targets:
            path = _services_path(target)
            if path and path[0] not in WRITABLE:
                found.append(f"line {node.lineno}: services.{'.'.join(path)}")
    return sorted(found, key=lambda place: int(place.split(":")[0].removeprefix("line ")))


@pytest.mark.parametrize("path", TASKS, ids=[p.name for p in TASKS])
def test_no_task_writes_to_the_services(path):
    assert writes_to_services(path.read_text()) == []


def test_the_check_sees_a_write():
    assert writes_to_services("services.reused.extend(refs)\nservices.variant = v\n") == [
        "line 1: services.reused", "line 2: services.variant"]
    assert writes_to_services("services.recorder.tool('s', 'x', 'ok', '')") == []

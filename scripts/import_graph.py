"""Which modules of geoask import which, and whether any import cycle exists.

Run ``.venv/bin/python scripts/import_graph.py`` from the checkout: it reads every module of the
packages (geoask, flows, tasks, agents, sandbox) with :mod:`ast` - nothing is imported - and
prints the count of project imports inside functions, the import cycles among all imports (module
level, function level and type-only ones under ``if TYPE_CHECKING:``: a type-only cycle is still
two modules that cannot be read apart), then, per room (top-level package or ``geoask``
sub-package), the rooms it imports. ``tests/test_import_structure.py`` asserts on it.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

PACKAGES = ("geoask", "flows", "tasks", "agents", "sandbox")
ROOT = Path(__file__).resolve().parents[1]


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file of :data:`PACKAGES`."""
    modules = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            modules[name] = path
    return modules


def imports(path: Path, known: Iterable[str]) -> tuple[set[str], int]:
    """Project modules that ``path`` imports, and how many import statements sit in a function."""
    known = set(known)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    local = 0

    def visit(node: ast.AST, in_function: bool) -> None:
        nonlocal local
        for child in ast.iter_child_nodes(node):
            targets: set[str] = set()
            if isinstance(child, ast.Import):
                targets = {_resolve(alias.name, known) for alias in child.names}
            elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                targets = {_resolve(f"{child.module}.{alias.name}", known) for alias in child.names}
            found.update(targets)
            local += in_function and bool(targets - {""})
            visit(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef))

    visit(tree, False)
    found.discard("")
    return found, local


def _resolve(dotted: str, known: set[str]) -> str:
    """The longest known module that ``dotted`` names (``a.b.name`` -> ``a.b``), or ''."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in known:
            return candidate
    return ""


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the project modules it imports, type-only ones included (self-imports dropped)."""
    files = module_files(root)
    return {name: imports(path, files)[0] - {name} for name, path in files.items()}


def function_local_imports(root: Path = ROOT) -> dict[str, int]:
    """Module -> its import statements of project modules inside a function (those > 0)."""
    files = module_files(root)
    counts = {name: imports(path, files)[1] for name, path in files.items()}
    return {name: count for name, count in counts.items() if count}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def room(module: str) -> str:
    """``geoask.sql.rules.parses`` -> ``geoask.sql``; ``tasks.question`` -> ``tasks``."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "geoask" and len(parts) > 2 else (
        parts[0] if parts[0] != "geoask" else module)


def room_imports(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Room -> the other rooms its modules import."""
    rooms: dict[str, set[str]] = defaultdict(set)
    for module, targets in graph.items():
        rooms[room(module)].update(room(t) for t in targets if room(t) != room(module))
    return dict(rooms)


def main() -> int:
    """Print the cycles and the room imports; exit 1 when a cycle exists."""
    graph = import_graph()
    found = cycles(graph)
    print(f"{len(graph)} modules, {sum(map(len, graph.values()))} imports")
    print(f"function-local project imports: {sum(function_local_imports().values())}")
    print(f"import cycles: {len(found)}")
    for component in found:
        print("  " + " <-> ".join(component))
    print("room -> rooms it imports:")
    for name, targets in sorted(room_imports(graph).items()):
        print(f"  {name:22} {', '.join(sorted(targets)) or '-'}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

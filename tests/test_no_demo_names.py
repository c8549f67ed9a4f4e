"""No code outside the demo-data loader names the demo schema or the demo's tables.

geoask must work on any PostGIS: schema and table names come from the catalog. The scan reads
every module of ``geoask/``, ``agents/``, ``tasks/``, ``flows/`` and ``sandbox/`` (except the
demo loader: ``geoask/demo_data/``, ``flows/load_demo_data.py``, ``tasks/demo_data.py``) with
``ast`` and looks at string constants (f-string parts included) and identifiers (names,
attributes, arguments, definitions, imports). The demo's schema and table names are read from
the shipped catalog. Documentation is exempt: a string that stands alone as a statement (module,
class, function and attribute docstrings, doctests included) explains, it does not run a query.
The schema counts as named when a string is exactly it or qualifies a name with it
(``demo.x``, also as a regex or before an f-string field); the prose word "demo" ("the demo
loader") is not the schema.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from geoask.catalog.model import CATALOG_PATH, load_catalog

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("geoask", "agents", "tasks", "flows", "sandbox")
DEMO_LOADER = ("geoask/demo_data/", "flows/load_demo_data.py", "tasks/demo_data.py")


def _demo_names() -> tuple[str, frozenset[str]]:
    catalog = load_catalog(CATALOG_PATH)
    return catalog.schema_name, frozenset(t.name for t in catalog.tables)


SCHEMA, TABLES = _demo_names()


def _documentation(tree: ast.AST) -> set[int]:
    """ids of string constants that stand alone as a statement (docstrings)."""
    return {id(node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)}


def _identifiers(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.keyword) and node.arg:
        return [node.arg]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.alias):
        return [node.asname or node.name.rpartition(".")[2]]
    return []


def demo_mentions(source: str, label: str, schema: str = SCHEMA,
                  tables: frozenset[str] = TABLES) -> list[str]:
    """``label:line: what`` for each place ``source`` names the demo schema or a demo table."""
    tree = ast.parse(source)
    documentation = _documentation(tree)
    # demo.x, "demo".x, a regex's demo\. and an f-string's "demo." before {name}
    qualified = re.compile(rf'(?:(?<![\w.])|(?<=\\b))"?{re.escape(schema)}"?\\?\.(?:["A-Za-z_]|$)')
    table_word = re.compile(r"\b(" + "|".join(map(re.escape, sorted(tables))) + r")\b")
    found = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in documentation:
                continue
            text = node.value
            if text.strip() == schema or qualified.search(text):
                found.append(f"{label}:{line}: schema {schema!r} in {text[:60]!r}")
            found += [f"{label}:{line}: table {name!r} in {text[:60]!r}"
                      for name in sorted(set(table_word.findall(text)))]
        found += [f"{label}:{line}: identifier {name!r}"
                  for name in _identifiers(node) if name in tables or name == schema]
    return found


def scanned_files(root: Path = ROOT) -> list[Path]:
    """Every module under ``root``'s scanned folders outside the demo loader, sorted."""
    files = sorted(p for folder in SCANNED for p in (root / folder).rglob("*.py"))
    return [p for p in files if not p.relative_to(root).as_posix().startswith(DEMO_LOADER)]


def scan(root: Path = ROOT) -> list[str]:
    """Every demo mention in the scanned modules under ``root``."""
    return [hit for path in scanned_files(root)
            for hit in demo_mentions(path.read_text(encoding="utf-8"),
                                     path.relative_to(root).as_posix())]


def test_code_outside_the_demo_loader_names_no_demo_schema_or_table():
    assert len(scanned_files()) > 100  # the scan sees the code base
    found = scan()
    assert found == [], "\n".join(found)


PLANTED = r'''
"""Module docs may say demo.us_states."""
QUERY = "SELECT name FROM demo.airports"
SCHEMA = "demo"
label = f"{QUERY} for the demo loader"
renamed = rf"\bdemo\.{QUERY}"
def count(us_states):
    """So may function docs: SELECT * FROM demo.world_countries."""
    return us_states
'''


def test_the_scan_finds_a_planted_name(tmp_path):
    for relative in ("agents/planted.py", "flows/load_demo_data.py", "geoask/clean.py"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "agents" / "planted.py").write_text(PLANTED, encoding="utf-8")
    (tmp_path / "flows" / "load_demo_data.py").write_text(PLANTED, encoding="utf-8")  # exempt
    clean = '"""Docs: the demo loader."""\nLOADER = "the demo loader"\n'
    (tmp_path / "geoask" / "clean.py").write_text(clean, encoding="utf-8")
    assert sorted(scan(tmp_path)) == [
        "agents/planted.py:3: schema 'demo' in 'SELECT name FROM demo.airports'",
        "agents/planted.py:3: table 'airports' in 'SELECT name FROM demo.airports'",
        "agents/planted.py:4: schema 'demo' in 'demo'",
        "agents/planted.py:6: schema 'demo' in '\\\\bdemo\\\\.'",
        "agents/planted.py:7: identifier 'us_states'",
        "agents/planted.py:9: identifier 'us_states'",
    ]


def test_the_demo_loader_is_the_only_exemption():
    every = {p.relative_to(ROOT).as_posix() for folder in SCANNED
             for p in (ROOT / folder).rglob("*.py")}
    scanned = {p.relative_to(ROOT).as_posix() for p in scanned_files()}
    assert every - scanned == {"flows/load_demo_data.py", "tasks/demo_data.py"}

"""Load and save benchmark case files (YAML, validated by ``benchmark/case.schema.json``).

A case file is checked twice: first against the JSON Schema (the published contract, so any
tool can validate a ``--tasks-file``), then by the pydantic model (rules that span fields).
Saving writes multi-line strings (SQL, scripts) as YAML block scalars so files stay readable.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from pydantic import ValidationError

from geoask.base.capped_input import MAX_DOCUMENT_CHARS, read_capped_text
from geoask.base.yamlio import load_yaml, parsed_file
from geoask.cases.model import BenchmarkCase, CaseFile
from geoask.errors import BenchmarkCaseError, validation_problems

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CASES_DIR = REPOSITORY_ROOT / "benchmark" / "cases"
SCHEMA_PATH = REPOSITORY_ROOT / "benchmark" / "case.schema.json"


@dataclass(frozen=True)
class CaseTarget:
    """The catalog and database a case file's cases run against (None: the configured one).

    Attributes:
        catalog: absolute path of the catalog YAML the file names (``catalog:``, relative to
            the file), or None for GEOASK_CATALOG_PATH.
        database: database name on the configured server (``database:``), or None for the
            configured database.

    """

    catalog: Path | None = None
    database: str | None = None

    def describe(self) -> str:
        """'catalog X, database Y' with 'the configured' for what is not named."""
        return (f"catalog {self.catalog or 'the configured one'}, "
                f"database {self.database or 'the configured one'}")


@dataclass(frozen=True)
class LoadedCase:
    """A validated case, the file it came from and that file's :class:`CaseTarget`."""

    case: BenchmarkCase
    path: Path
    target: CaseTarget = CaseTarget()


@lru_cache(maxsize=1)
def case_schema() -> dict[str, Any]:
    """The JSON Schema of a case file (``benchmark/case.schema.json``)."""
    return dict(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))


def case_files(location: Path) -> list[Path]:
    """``location`` itself if it is a file, else its ``*.yaml``/``*.yml`` files, sorted.

    Raises:
        BenchmarkCaseError: the path does not exist or holds no case file.

    """
    if location.is_file():
        return [location]
    if not location.is_dir():
        raise BenchmarkCaseError(f"{location} does not exist; pass a case file or folder")
    files = sorted([*location.glob("*.yaml"), *location.glob("*.yml")])
    if not files:
        raise BenchmarkCaseError(f"{location} holds no *.yaml case file")
    return files


def load_case_file(path: Path) -> list[LoadedCase]:
    """Read and validate one case file (kept while it is unchanged: :func:`parsed_file`).

    Raises:
        BenchmarkCaseError: unreadable YAML, a JSON Schema violation (with its path in the
            file) or a model rule violation (with the case id).

    """
    try:
        return list(parsed_file(path, _parse_case_file))
    except OSError as error:
        raise BenchmarkCaseError(f"cannot read case file {path}: {error}") from None


def _parse_case_file(path: Path) -> tuple[LoadedCase, ...]:
    raw = _read_yaml(path)
    errors = sorted(
        jsonschema.Draft202012Validator(case_schema()).iter_errors(raw),
        key=lambda error: list(error.absolute_path),
    )
    if errors:
        details = "; ".join(
            f"at {schema_problem(error)}" for error in errors[:5]
        )
        raise BenchmarkCaseError(f"{path} does not follow case.schema.json: {details}")
    try:
        parsed = CaseFile.model_validate(raw)
    except ValidationError as error:
        raise BenchmarkCaseError(f"{path}: {validation_problems(error)}") from None
    catalog = None
    if parsed.catalog is not None:
        catalog = (path.parent / parsed.catalog).resolve()
        if catalog.suffix not in (".yaml", ".yml"):
            raise BenchmarkCaseError(f"{path}: catalog {parsed.catalog!r} is not a catalog "
                                     "YAML file (.yaml or .yml)")
        if not catalog.is_file():
            raise BenchmarkCaseError(f"{path}: catalog {parsed.catalog!r} names no file "
                                     f"({catalog}); give a path relative to the case file")
    target = CaseTarget(catalog, parsed.database)
    return tuple(LoadedCase(case, path, target) for case in parsed.cases)


def schema_problem(error: jsonschema.ValidationError) -> str:
    """``'<path>: <what the schema expects>'`` for a JSON Schema violation, without values.

    jsonschema's own message quotes the offending value (which may be a secret file a path
    pointed at), so only the place, the rule and what the schema expects are given; unknown
    keys are named only when they look like field names. For ``oneOf``/``anyOf`` the
    problem deepest inside an alternative is told (the alternative the entry nearly meets).

    >>> schema_problem(jsonschema.ValidationError("x", validator="type", validator_value="array"))
    '(root): type: the schema expects "array"'
    """
    if error.context:
        return schema_problem(max(error.context, key=lambda sub: (
            len(sub.absolute_path), sub.validator not in ("additionalProperties", "required"))))
    where = "/".join(str(part) for part in error.absolute_path) or "(root)"
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        schema = error.schema if isinstance(error.schema, dict) else {}
        known = set(schema.get("properties", {}))
        names = sorted(str(key) for key in error.instance if key not in known)
        shown = [name for name in names if _FIELD_NAME.fullmatch(name)]
        return (f"{where}: unknown key {', '.join(shown)}" if shown and len(shown) == len(names)
                else f"{where}: a key the schema does not define")
    if error.validator in ("required", "type", "enum", "const", "minimum", "maximum",
                           "minItems", "maxItems", "minLength", "maxLength", "pattern"):
        return f"{where}: {error.validator}: the schema expects " \
               f"{json.dumps(error.validator_value)[:120]}"
    return f"{where}: fails the schema's {error.validator!s} rule"


_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,40}")


def load_cases(location: Path, only: Iterable[str] = ()) -> list[LoadedCase]:
    """Load every case under ``location`` (file or folder), optionally only the given ids.

    Raises:
        BenchmarkCaseError: a file is invalid, two cases share an id, or an ``only`` id is
            unknown.

    """
    loaded: list[LoadedCase] = []
    seen: dict[str, Path] = {}
    for path in case_files(location):
        for item in load_case_file(path):
            if item.case.id in seen:
                raise BenchmarkCaseError(
                    f"case id {item.case.id} appears in {seen[item.case.id]} and {path}"
                )
            seen[item.case.id] = path
            loaded.append(item)
    wanted = list(only)
    if wanted:
        unknown = sorted(set(wanted) - seen.keys())
        if unknown:
            raise BenchmarkCaseError(f"unknown case id(s) {unknown}; see {location}")
        loaded = [item for item in loaded if item.case.id in set(wanted)]
    return loaded


def run_target(loaded: Iterable[LoadedCase]) -> CaseTarget:
    """The one :class:`CaseTarget` of a run's cases (the configured one when there are none).

    Raises:
        BenchmarkCaseError: the files name different catalogs or databases (one run is one
            catalog and database: run them separately).

    """
    by_target: dict[CaseTarget, Path] = {}
    for item in loaded:
        by_target.setdefault(item.target, item.path)
    if len(by_target) > 1:
        listed = "; ".join(f"{path.name}: {target.describe()}"
                           for target, path in by_target.items())
        raise BenchmarkCaseError(
            f"these case files name different catalogs or databases ({listed}); one run uses "
            "one catalog and database, so pass the files to separate runs (--tasks-file F)")
    return next(iter(by_target), CaseTarget())


def write_expected_values(path: Path, values: dict[str, Any]) -> None:
    """Set ``expected.value`` of the cases ``values`` names (id -> value) in file ``path``.

    Raises:
        BenchmarkCaseError: the file cannot be read or a case id is not in it.

    """
    raw = _read_yaml(path)
    by_id = {case["id"]: case for case in raw["cases"]}
    for case_id, value in values.items():
        if case_id not in by_id:
            raise BenchmarkCaseError(f"case {case_id} is not in {path}")
        by_id[case_id].setdefault("expected", {})["value"] = rounded(value)
    text = yaml.dump(raw, Dumper=_BlockDumper, sort_keys=False, allow_unicode=True, width=100)
    path.write_text(text, encoding="utf-8")


def rounded(value: Any, digits: int = 10) -> Any:
    """``value`` with every float rounded to ``digits`` significant digits (for stable files).

    >>> rounded({"a": [1.23456789012345, 2]})
    {'a': [1.23456789, 2]}
    """
    if isinstance(value, float):
        return float(f"{value:.{digits}g}")
    if isinstance(value, list):
        return [rounded(item, digits) for item in value]
    if isinstance(value, dict):
        return {key: rounded(item, digits) for key, item in value.items()}
    return value


def _read_yaml(path: Path) -> Any:
    try:
        return load_yaml(read_capped_text(path, MAX_DOCUMENT_CHARS, what=f"case file {path}"))
    except (OSError, UnicodeDecodeError) as error:
        raise BenchmarkCaseError(f"cannot read case file {path}: {error}") from None
    except yaml.YAMLError as error:  # its text quotes the file; give the problem and place only
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or "unreadable YAML"
        raise BenchmarkCaseError(f"{path} is not valid YAML: {problem}{where}") from None


class _BlockDumper(yaml.SafeDumper):
    """Writes multi-line strings as ``|`` block scalars."""


def _str_presenter(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    if "\n" in data:
        text = "\n".join(line.rstrip() for line in data.splitlines()) + "\n"
        return dumper.represent_scalar("tag:yaml.org,2002:str", text, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_BlockDumper.add_representer(str, _str_presenter)

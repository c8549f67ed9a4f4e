"""The compute agent: writes one GeoPandas/Shapely script for the sandbox.

The script reads the step's input artifacts from ``/input/<name>.geojson|parquet|json|tif``
(:data:`geoask.base.formats.EXPORT_FORMATS`), may write
files to ``/scratch``, and prints as its last line one JSON object
``{"status": "success"|"error", "summary": str, "result": object|array}``. The script models
are in :mod:`geoask.vocabulary.drafts`.
"""

from __future__ import annotations

import ast
import re
import sys
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from pydantic_ai import Agent, RunContext

from agents._checks import raise_for_errors
from agents._schema import COMPACT_OUTPUT_TOOLS, compact_json
from geoask.base.formats import EXPORT_FORMATS, Content, formats_holding
from geoask.sql.crs import PLANAR_MARKER
from geoask.vocabulary.drafts import (
    ComputeOutput,
    ComputeRefusal,
    ComputeScript,
    measures_in_metres,
)
from geoask.vocabulary.plan import ExecutionConstraints, Intent, OperationIntent, PlanStep
from sandbox.protocol import PROTOCOL_EXAMPLE
from sandbox.runtime import AVAILABLE_IMPORTS

# The Agent itself is defined at the end of this module (see agents/README.md).


@dataclass(frozen=True)
class InputArtifact:
    """An input file of the step with its compact preview.

    The preview (:meth:`geoask.sql.export.ResultPreview.to_text`) gives columns, rows, geometry,
    bbox and, per geometry column, the CRS it is stored in (SRID, name, units) and the metric CRS
    to project to for areas and distances (``crs of <column>: ...``).
    """

    name: str
    path_in_sandbox: str
    preview: str


@dataclass(frozen=True)
class ComputeAttempt:
    """A failed earlier attempt: the script and the classified sandbox error."""

    script: str
    error: str


@dataclass(frozen=True)
class ComputeDeps:
    """What the compute agent sees (after CGD-QCSF Table 4)."""

    question: str
    step: PlanStep
    constraints: ExecutionConstraints
    inputs: list[InputArtifact]
    schema_text: str
    executed_sql: list[str]
    intent: Intent
    previous_attempts: list[ComputeAttempt] = field(default_factory=list)


# --- instructions --------------------------------------------------------------------------
# Developer note: inputs follow the CGD-QCSF computation agent's context (its Table 4) and its
# output protocol; the sandbox enforces isolation, these rules avoid wasted runs.

# Import names of the sandbox's analysis libraries.
ANALYSIS_IMPORTS = tuple(name for name in AVAILABLE_IMPORTS if name.isidentifier())
SANDBOX_LIBRARIES = [name for name in ANALYSIS_IMPORTS if name not in sys.stdlib_module_names]



def read_inputs_rule() -> str:
    """The instructions' rule on reading inputs: each export format's reading hint, wrapped."""
    hints = "; ".join(f.script_hint for f in EXPORT_FORMATS)
    return textwrap.fill(f"- Read inputs only from their /input paths ({hints}); write other "
                         "files only under /scratch.", width=92, subsequent_indent="  ")


FEATURE_FORMATS = " and ".join(f.suffix for f in formats_holding(Content.FEATURES))
"""The vector export formats (their suffixes), all in WGS 84 lon/lat, as the instructions say."""


INSTRUCTIONS = f"""\
Write one Python script for one computation step. It runs in a sandbox without database or
network, over the input files (previews given) that the listed SQL exported.
{read_inputs_rule()}
- Import only {", ".join(SANDBOX_LIBRARIES)} and the standard library, but no subprocess,
  socket, network, database, ctypes or multiprocessing; no exec, eval or __import__.
- Use column names exactly as in the previews and the SQL.
- Feature inputs ({FEATURE_FORMATS}) are WGS 84 lon/lat (EPSG:4326) whatever CRS the
  database stores; each preview's "crs of" line names the native CRS, its units and the metric
  CRS. Compute areas, buffers and distances after to_crs() to it, never in degrees; where the
  line says "distances: geodesic" it is an equal-area CRS for areas only: measure distances on
  the lon/lat with pyproj.Geod(ellps="WGS84") (inv, geometry_length) and buffer each feature in
  its estimate_utm_crs(). The intent's distance is in metres; name the CRS in method.
  make_valid geometries before overlays.
- Rows an SQL bounding-box screen (&&) selected are a superset (filter-refine): apply the
  exact distance or predicate before counting, ranking or reporting them.
- An input whose "crs of" line says "planar coordinates" is SRID 0 data the catalog declares
  planar: exported in its own coordinates, not lon/lat; drop the CRS GeoPandas assumes
  (set_crs(None, allow_override=True)), never to_crs(), and measure in its declared units
  (unknown units: report "units of the data").
- A GeoTIFF input keeps the raster's own CRS (its preview's "raster:" line gives bands, CRS,
  pixel size, nodata and extent; the schema gives band meanings and units): mask nodata
  (read(masked=True)), reproject vector zones to_crs() the raster's CRS before
  rasterstats.zonal_stats/point_query, and measure pixel areas and slopes in metres.
- The last output line is one JSON object with exactly the keys status ("success" or "error"),
  summary (one sentence with units) and result (object or array), e.g. {PROTOCOL_EXAMPLE}
- Compute every number from the data; never type a result in. Keep empty results explicit.
- If a needed field is in no input, reply ComputeRefusal naming it in missing_fields: the SQL
  step is then regenerated to export it. On a retry, fix the error shown.
"""


# --- checks (pure; one rule each) ----------------------------------------------------------

# Standard-library modules a script may not import: processes, network, FFI, databases.
FORBIDDEN_MODULES = frozenset({
    "subprocess", "socket", "ssl", "socketserver", "multiprocessing", "ctypes", "urllib",
    "http", "ftplib", "smtplib", "poplib", "imaplib", "telnetlib", "xmlrpc", "asyncio",
    "importlib", "pty", "sqlite3", "webbrowser", "concurrent",
})
_ALLOWED_MODULES = (frozenset(sys.stdlib_module_names) | frozenset(ANALYSIS_IMPORTS)) \
    - FORBIDDEN_MODULES
_DYNAMIC_CODE = frozenset({"exec", "eval", "compile", "__import__"})
_HOST_ROOTS = frozenset({"etc", "home", "root", "proc", "sys", "dev", "var", "usr", "opt",
                         "srv", "mnt", "run", "boot", "work", "bin", "lib"})
_PREVIEW_COLUMN = re.compile(r"([^\s,()]+) \(")


def parse_script(script: str) -> ast.Module | str:
    """The script's syntax tree, or the syntax error as a message naming the line.

    >>> parse_script("print(")
    "the script does not parse: line 1: '(' was never closed"
    """
    try:
        return ast.parse(script)
    except SyntaxError as error:
        return f"the script does not parse: line {error.lineno}: {error.msg}"


def imported_modules(tree: ast.Module) -> list[str]:
    """Top-level names of every module the script imports (absolute imports only)."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module.split(".")[0])
    return names


def imports_available(tree: ast.Module) -> str | None:
    """Only the sandbox's analysis libraries and the safe standard library are imported.

    >>> imports_available(ast.parse("import requests")).split(";")[0]
    'imports not available in the sandbox: requests'
    """
    bad = sorted({name for name in imported_modules(tree) if name not in _ALLOWED_MODULES})
    if not bad:
        return None
    return (f"imports not available in the sandbox: {', '.join(bad)}; use only "
            f"{', '.join(ANALYSIS_IMPORTS)} and the standard library")


def no_dynamic_code(tree: ast.Module) -> str | None:
    """No exec/eval/compile/__import__ calls."""
    used = sorted({node.func.id for node in ast.walk(tree)
                   if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                   and node.func.id in _DYNAMIC_CODE})
    return f"do not call {', '.join(used)}; write the code directly" if used else None


def string_constants(tree: ast.Module) -> list[str]:
    """Every string literal of the script (f-string pieces included)."""
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def reads_every_input(tree: ast.Module, inputs: list[InputArtifact]) -> str | None:
    """Each input file is named in the script (its path or file name), or /input is globbed."""
    strings = string_constants(tree)
    if any(s.startswith("/input") and "*" in s for s in strings):
        return None
    unread = [item.path_in_sandbox for item in inputs
              if not any(item.path_in_sandbox in s or PurePosixPath(item.path_in_sandbox).name in s
                         for s in strings)]
    return (f"read the inputs from their sandbox paths: {', '.join(unread)} are never opened"
            if unread else None)


def no_host_paths(tree: ast.Module) -> str | None:
    """Absolute paths stay under /input, /scratch or /tmp (the sandbox shows nothing else)."""
    bad = sorted({s for s in string_constants(tree)
                  if s.startswith("/") and s.split("/")[1] in _HOST_ROOTS})
    return (f"the sandbox has only /input, /scratch and /tmp; do not use {', '.join(bad)}"
            if bad else None)


def prints_protocol_json(tree: ast.Module) -> str | None:
    """The script serialises its protocol object with json.dumps/json.dump."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else (
                func.id if isinstance(func, ast.Name) else "")
            if name in ("dumps", "dump"):
                return None
    return f"end by printing the protocol object as JSON, e.g. {PROTOCOL_EXAMPLE}"


def projects_for_distances(tree: ast.Module, intent: Intent,
                           inputs: Sequence[InputArtifact] = ()) -> str | None:
    """A question with a distance (or a measurement) reprojects to a metric CRS first.

    ``to_crs``/``estimate_utm_crs`` or geodesic measurement with ``pyproj.Geod`` count. Inputs
    that are all planar (:data:`~geoask.sql.crs.PLANAR_MARKER` in their previews) are measured
    in their own units: no projection is asked for (inputs without geometry do not count).
    """
    if intent.topology.distance is None and intent.operation is not OperationIntent.MEASURE:
        return None
    located = [item for item in inputs if "crs of " in item.preview]
    if located and all(PLANAR_MARKER in item.preview for item in located):
        return None
    if measures_in_metres(tree):
        return None
    return ("distances and areas must be computed in a projected CRS in metres or feet: call "
            "to_crs(...) with the metric CRS the input's preview names (its 'crs of' line; e.g. "
            "gdf.to_crs(\"EPSG:32618\")) before buffering or measuring, or measure "
            "geodesically with pyproj.Geod")


def preview_columns(preview: str) -> set[str]:
    """Column names listed on the ``columns:`` line of an input preview (``name (type), ...``).

    >>> sorted(preview_columns("columns: geoid (text), pop (bigint)"))
    ['geoid', 'pop']
    """
    for line in preview.splitlines():
        if line.startswith("columns:"):
            return set(_PREVIEW_COLUMN.findall(line.removeprefix("columns:")))
    return set()


def missing_fields_really_missing(refusal: ComputeRefusal,
                                  inputs: list[InputArtifact]) -> str | None:
    """A refusal only names fields that no input has (else the script should just use them)."""
    present = {field: item.name for item in inputs for field in preview_columns(item.preview)}
    found = [f"{field} (in {present[field]})" for field in refusal.missing_fields
             if field in present]
    return (f"these fields are not missing, the inputs have them: {', '.join(found)}; write the "
            "script with them" if found else None)


SCRIPT_RULES: tuple[Callable[[ast.Module], str | None], ...] = (
    imports_available,
    no_dynamic_code,
    no_host_paths,
    prints_protocol_json,
)


def compute_errors(output: ComputeOutput, deps: ComputeDeps) -> list[str]:
    """Every rule the compute agent's ``output`` breaks for ``deps`` (empty when acceptable)."""
    if isinstance(output, ComputeRefusal):
        errors = [] if output.reason.strip() else ["a refusal needs a reason"]
        wrongly_missing = missing_fields_really_missing(output, deps.inputs)
        return errors + ([wrongly_missing] if wrongly_missing else [])
    tree = parse_script(output.script)
    if isinstance(tree, str):
        return [tree]
    errors = [error for rule in SCRIPT_RULES if (error := rule(tree)) is not None]
    for error in (reads_every_input(tree, deps.inputs),
                  projects_for_distances(tree, deps.intent, deps.inputs)):
        if error is not None:
            errors.append(error)
    return errors


# --- agent ---------------------------------------------------------------------------------

OUTPUT_RETRIES = 2

compute_agent: Agent[ComputeDeps, ComputeOutput] = Agent(
    output_type=[ComputeScript, ComputeRefusal],
    deps_type=ComputeDeps,
    instructions=INSTRUCTIONS,
    name="compute",
    defer_model_check=True,
    retries={"output": OUTPUT_RETRIES},
    capabilities=[COMPACT_OUTPUT_TOOLS],
)


@compute_agent.output_validator
def _validate(ctx: RunContext[ComputeDeps], output: ComputeOutput) -> ComputeOutput:
    return raise_for_errors(compute_errors(output, ctx.deps), output)


def prompt(deps: ComputeDeps) -> str:
    """The user message of the compute agent (after CGD-QCSF Table 4), with earlier failures."""
    files = "\n".join(f"- {item.name}: {item.path_in_sandbox}\n{item.preview}"
                      for item in deps.inputs) or "(none)"
    sql = "\n\n".join(deps.executed_sql) or "(none)"
    parts = [
        f"Question: {deps.question}",
        f"Step (JSON): {compact_json(deps.step)}",
        "Execution constraints (JSON): " + deps.constraints.model_dump_json(
            include={"geometry_needed", "input_mode", "spatial_granularity",
                     "temporal_comparison"}, exclude_defaults=True),
        f"Input files:\n{files}",
        f"Schema outline:\n{deps.schema_text}",
        f"Executed SQL:\n{sql}",
        f"Intent (JSON): {compact_json(deps.intent)}",
    ]
    for number, attempt in enumerate(deps.previous_attempts, start=1):
        parts.append(f"Earlier attempt {number} failed.\nScript:\n{attempt.script}\n"
                     f"Error: {attempt.error}")
    return "\n\n".join(parts)

"""The geoask error hierarchy.

Every error a user can see derives from :class:`GeoaskError`; its message says what was wrong
and what to do. The CLI prints ``str(error)`` and exits with ``error.exit_code`` instead of a
traceback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


class GeoaskError(Exception):
    """Base of all user-facing geoask errors (CLI exit code 1)."""

    exit_code: int = 1


class ConfigurationError(GeoaskError):
    """A setting is missing or invalid; the message names the setting to change."""


class DatabaseError(GeoaskError):
    """The database could not be started, reached or loaded."""


class DataValidationError(GeoaskError):
    """Loaded or prepared data failed a check (row count, SRID, geometry validity, key)."""


class InputTooLargeError(GeoaskError):
    """Input handed to geoask (SQL, a script, a YAML file) is past its cap; nothing was used."""


class DatasetError(GeoaskError):
    """A dataset manifest (``dataset.yaml``) is malformed or its data files do not match it."""


class RasterTooLargeError(DataValidationError):
    """A raster (decoded or mosaicked) would pass its size caps; refused before any allocation."""


class CrsError(DataValidationError):
    """A geometry's CRS is unknown or unusable (SRID 0 outside lon/lat range, no EPSG code).

    The message says which column and how to set its SRID (catalog or database).
    """


class CatalogError(GeoaskError):
    """The semantic catalog is malformed or disagrees with the live database."""


class UnsafeQueryError(GeoaskError):
    """A statement was refused by the SQL guard (CLI exit code 2)."""

    exit_code = 2


class SandboxError(GeoaskError):
    """The Python sandbox could not be started (not: the user's script failed)."""


class RetrievalError(GeoaskError):
    """The schema index could not be built, opened or searched."""


class IndexUnavailableError(RetrievalError):
    """The schema index's store (chroma, on disk or a server) could not be opened at all."""


class QueryRejectedError(UnsafeQueryError):
    """The SQL guard refused a statement; carries which rule failed and where (CLI exit code 2).

    Attributes:
        rule: name of the guard rule that failed (e.g. ``"allowed_functions"``).
        description: what is wrong and what to do instead, phrased for an agent to act on.
        fragment: the offending part of the statement (may be empty).
        line: 1-based line of the fragment in the submitted SQL, when known.
        col: 1-based column of the fragment in the submitted SQL, when known.

    """

    def __init__(
        self,
        rule: str,
        description: str,
        fragment: str = "",
        line: int | None = None,
        col: int | None = None,
    ) -> None:
        self.rule = rule
        self.description = description
        self.fragment = fragment
        self.line = line
        self.col = col
        where = f" (line {line}, col {col})" if line is not None and col is not None else ""
        quoted = f"; offending fragment{where}: {fragment}" if fragment else where
        super().__init__(f"rule {rule}: {description}{quoted}")

    def as_dict(self) -> dict[str, str | int | None]:
        """The failure as ``{rule, description, fragment, line, col}`` for agents and logs."""
        return {
            "rule": self.rule,
            "description": self.description,
            "fragment": self.fragment,
            "line": self.line,
            "col": self.col,
        }


class QueryExecutionError(GeoaskError):
    """The database refused or failed a checked query; classified for an agent's correction loop.

    Attributes:
        kind: one of ``syntax``, ``undefined_table``, ``undefined_column``, ``type_mismatch``,
            ``grouping``, ``division_by_zero``, ``timeout``, ``permission``,
            ``result_too_large`` (past the row or size cap), ``other``.
        server_message: the server's primary message, unchanged.
        sqlstate: the five-character SQLSTATE code, when the server sent one.
        position: 1-based character position in the submitted SQL, when the server gave one.
        line: 1-based line of ``position`` in the submitted SQL.
        col: 1-based column of ``position`` in the submitted SQL.
        hint: the server's hint, if any.

    """

    def __init__(
        self,
        kind: str,
        server_message: str,
        *,
        sqlstate: str | None = None,
        position: int | None = None,
        line: int | None = None,
        col: int | None = None,
        hint: str | None = None,
    ) -> None:
        self.kind = kind
        self.server_message = server_message
        self.sqlstate = sqlstate
        self.position = position
        self.line = line
        self.col = col
        self.hint = hint
        where = f" at line {line}, col {col}" if line is not None and col is not None else ""
        extra = f" (hint: {hint})" if hint else ""
        # The kind names the failure; no "error" after it (callers print "error: <message>").
        super().__init__(f"{kind}{where}: {server_message}{extra}")

    def as_dict(self) -> dict[str, str | int | None]:
        """The failure as a flat mapping for the execution state and prompts."""
        return {
            "kind": self.kind,
            "server_message": self.server_message,
            "sqlstate": self.sqlstate,
            "position": self.position,
            "line": self.line,
            "col": self.col,
            "hint": self.hint,
        }


class ArtifactWriteError(GeoaskError):
    """An artifact (exported result, preview) could not be written to the artifact folder."""


class BenchmarkCaseError(GeoaskError):
    """A benchmark case file is missing, malformed or violates benchmark/case.schema.json."""


class ModelCallError(GeoaskError):
    """A language-model call of an agent failed; the message names the agent and what to do.

    Attributes:
        role: the agent (``intent``, ``planner``, ``sql``, ``compute``, ``reviewer``, ``answer``).
        transient: True for failures worth retrying later (429, 5xx, timeouts, dropped
            connections); False for configuration errors, refusals and malformed output.

    """

    def __init__(self, role: str, message: str, *, transient: bool = False) -> None:
        self.role = role
        self.transient = transient
        super().__init__(f"{role} agent: {message}")


class AgentOutputError(ModelCallError):
    """An agent's output kept breaking its rules until the output retry budget ran out."""


class QuestionInterruptedError(GeoaskError):
    """A question run was stopped by SIGINT/SIGTERM before it finished (it is not recorded)."""


class ServiceError(GeoaskError):
    """The Prefect server could not be started or reached, or a run through its API failed."""


def validation_problems(error: ValidationError, limit: int = 5) -> str:
    """``'loc: message; loc: message (and N more)'`` of a pydantic error, without input values.

    The offending input is never echoed (it may be a secret file a path pointed at); a
    ``Value error, `` prefix is dropped. Used wherever a file or option fails its model.
    """
    problems = list(dict.fromkeys(
        f"{'.'.join(map(str, e['loc'])) or '(top level)'}: "
        f"{str(e['msg']).removeprefix('Value error, ')}"
        for e in error.errors(include_input=False)))
    more = f" (and {len(problems) - limit} more)" if len(problems) > limit else ""
    return "; ".join(problems[:limit]) + more

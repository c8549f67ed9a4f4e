"""A database error as the kind the SQL agent's correction loop reads (from its SQLSTATE).

:func:`classify_database_error` turns a psycopg error into a
:class:`~geoask.errors.QueryExecutionError`: its ``kind`` (:data:`ERROR_KINDS`), message, hint
and the position mapped back to the submitted text.
"""

from __future__ import annotations

from psycopg import errors as pg_errors

from geoask.errors import QueryExecutionError

# SQLSTATE -> kind reported to the agent's correction loop.
ERROR_KINDS: dict[str, str] = {
    "42601": "syntax",
    "42P01": "undefined_table",
    "3F000": "undefined_table",
    "42703": "undefined_column",
    "42702": "undefined_column",
    "42804": "type_mismatch",
    "42883": "type_mismatch",
    "42846": "type_mismatch",
    "42725": "type_mismatch",
    "22P02": "type_mismatch",
    "22007": "type_mismatch",
    "22008": "type_mismatch",
    "42803": "grouping",
    "22012": "division_by_zero",
    "57014": "timeout",
    "42501": "permission",
    "25006": "permission",
}


def classify_database_error(
    error: pg_errors.Error, sql: str, body_offset: int = 0, *,
    statement_timeout_s: int | None = None,
) -> QueryExecutionError:
    """Turn a psycopg error into a :class:`QueryExecutionError` for the agent's correction loop.

    ``kind`` comes from the SQLSTATE (see :data:`ERROR_KINDS`, ``other`` otherwise); the
    server's position (1-based, in ``sql``) is mapped to the submitted text, which starts
    ``body_offset`` characters into ``sql``. A timeout's hint names the limit in force
    (``statement_timeout_s``) and its setting.
    """
    diag = error.diag
    sqlstate = diag.sqlstate or getattr(error, "sqlstate", None)
    message = diag.message_primary or str(error).strip() or type(error).__name__
    position = line = col = None
    hint = diag.message_hint
    if ERROR_KINDS.get(sqlstate or "") == "timeout" and statement_timeout_s is not None:
        hint = (f"the statement timeout is {statement_timeout_s} s (GEOASK_STATEMENT_TIMEOUT_S);"
                " do less work in SQL (screen with a bounding-box test, aggregate, select fewer "
                "rows) or raise the setting")
    if diag.statement_position:
        absolute = int(diag.statement_position)
        body = sql[body_offset:]
        relative = absolute - body_offset
        if 1 <= relative <= len(body):
            position = relative
            before = body[: relative - 1]
            line = before.count("\n") + 1
            col = relative - (before.rfind("\n") + 1)
    return QueryExecutionError(
        ERROR_KINDS.get(sqlstate or "", "other"),
        message,
        sqlstate=sqlstate,
        position=position,
        line=line,
        col=col,
        hint=hint,
    )

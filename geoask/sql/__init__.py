"""Read-only SQL: the static guard, read-only execution and GeoJSON/JSON export.

Quick start::

    from geoask.sql import GuardContext, check_sql
    checked = check_sql("SELECT state_name, geom FROM demo.us_states", GuardContext())
    checked.sql  # the text that will run (the submitted text, wrapped with a LIMIT)
"""

from __future__ import annotations

from geoask.sql.context import AnswerContract, GuardContext, SpatialPolicy
from geoask.sql.guard import CheckedQuery, check_sql, find_violation
from geoask.sql.violation import GuardViolation

__all__ = [
    "AnswerContract",
    "CheckedQuery",
    "GuardContext",
    "GuardViolation",
    "SpatialPolicy",
    "check_sql",
    "find_violation",
]

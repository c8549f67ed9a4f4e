"""Read-only SQL: the static guard, read-only execution and GeoJSON/JSON export.

Quick start::

    from geoask.sql import GuardContext, check_sql
    checked = check_sql("SELECT state_name, geom FROM demo.us_states", GuardContext())
    checked.sql  # the text that will run (the submitted text, wrapped with a LIMIT)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
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
_HOMES = {"AnswerContract": "context", "GuardContext": "context", "SpatialPolicy": "context",
          "CheckedQuery": "guard", "check_sql": "guard", "find_violation": "guard",
          "GuardViolation": "violation"}
"""Where each re-exported name lives: imported on first use, so importing one submodule
(``geoask.sql.context`` for a variant's policy, say) does not import the guard, its two SQL
parsers and numpy - about a second of ``geoask ask``'s start on the warm-worker path."""


def __getattr__(name: str) -> object:
    """The re-exported names of :data:`__all__`, imported lazily from their modules."""
    if name in _HOMES:
        import importlib

        return getattr(importlib.import_module(f"geoask.sql.{_HOMES[name]}"), name)
    raise AttributeError(f"module 'geoask.sql' has no attribute {name!r}")

"""Guard rules: one module per rule, each exporting a function of the same name.

A rule takes the parsed query and the guard context and returns a
:class:`~geoask.sql.violation.GuardViolation` or None. :data:`RULES` fixes their order.

The rules in :data:`TOKEN_RULES` also judge text that sqlglot cannot parse (on its tokens);
the others need the tree and are skipped for such text, and ``parses`` comes last to report it.
So a statement's verdict does not depend on whether a given sqlglot release parses it.

``postgres_view`` and ``parsers_agree`` bring in the second parser (PostgreSQL's own, see
:mod:`geoask.guard <geoask.sql.guard>`): they judge every statement, and text that only
PostgreSQL's grammar parses (``a &&& b``) is accepted when every policy holds on its reading.
"""

from __future__ import annotations

from geoask.sql.rules.allowed_functions import allowed_functions
from geoask.sql.rules.lexical_safety import lexical_safety
from geoask.sql.rules.no_bind_parameters import no_bind_parameters
from geoask.sql.rules.no_data_modification import no_data_modification
from geoask.sql.rules.no_operator_syntax import no_operator_syntax
from geoask.sql.rules.no_row_locks import no_row_locks
from geoask.sql.rules.no_select_into import no_select_into
from geoask.sql.rules.no_system_catalogs import no_system_catalogs
from geoask.sql.rules.parsers_agree import parsers_agree
from geoask.sql.rules.parses import parses
from geoask.sql.rules.postgres_view import postgres_view
from geoask.sql.rules.query_only import query_only
from geoask.sql.rules.single_statement import single_statement
from geoask.sql.rules.spatial_policy import spatial_policy
from geoask.sql.rules.topk_contract import topk_contract

RULES = (
    single_statement,
    query_only,
    no_data_modification,
    no_select_into,
    no_row_locks,
    lexical_safety,
    no_bind_parameters,
    no_operator_syntax,
    no_system_catalogs,
    spatial_policy,
    allowed_functions,
    topk_contract,
    postgres_view,
    parsers_agree,
    parses,
)
"""The guard's rules in the order they run; the first failure is reported."""

TOKEN_RULES = frozenset(
    {single_statement, query_only, no_data_modification, lexical_safety, allowed_functions,
     postgres_view, parsers_agree, parses}
)
"""Rules that decide on the tokens when sqlglot could not build a tree."""

__all__ = ["RULES", "TOKEN_RULES"]

"""The guard's policy rules in the order they run: the one place a rule is registered.

Each line binds a rule module's two readings (:class:`~geoask.sql.rule.GuardRule`): its check on
sqlglot's reading and, where it has one, its check on PostgreSQL's (``<rule>_pg``).
:data:`geoask.sql.rules.RULES` runs these first, then ``postgres_view`` - which runs their
PostgreSQL checks in this same order - then ``parsers_agree`` and ``parses``.

The tuple sits outside :mod:`geoask.sql.rules` so that ``postgres_view`` can read it without an
import cycle (the package imports ``postgres_view`` for :data:`~geoask.sql.rules.RULES`).
"""

from __future__ import annotations

from geoask.sql.rule import GuardRule
from geoask.sql.rules.allowed_functions import allowed_functions, allowed_functions_pg
from geoask.sql.rules.lexical_safety import lexical_safety
from geoask.sql.rules.no_bind_parameters import no_bind_parameters, no_bind_parameters_pg
from geoask.sql.rules.no_data_modification import no_data_modification, no_data_modification_pg
from geoask.sql.rules.no_operator_syntax import no_operator_syntax, no_operator_syntax_pg
from geoask.sql.rules.no_outdb_rasters import no_outdb_rasters, no_outdb_rasters_pg
from geoask.sql.rules.no_row_locks import no_row_locks, no_row_locks_pg
from geoask.sql.rules.no_select_into import no_select_into, no_select_into_pg
from geoask.sql.rules.no_system_catalogs import no_system_catalogs, no_system_catalogs_pg
from geoask.sql.rules.query_only import query_only, query_only_pg
from geoask.sql.rules.single_statement import single_statement, single_statement_pg
from geoask.sql.rules.spatial_policy import spatial_policy, spatial_policy_pg
from geoask.sql.rules.topk_contract import topk_contract, topk_contract_pg

POLICY_RULES: tuple[GuardRule, ...] = (
    GuardRule(single_statement, single_statement_pg, tokens=True),
    GuardRule(query_only, query_only_pg, tokens=True),
    GuardRule(no_data_modification, no_data_modification_pg, tokens=True),
    GuardRule(no_select_into, no_select_into_pg),
    GuardRule(no_row_locks, no_row_locks_pg),
    GuardRule(lexical_safety, tokens=True),
    GuardRule(no_bind_parameters, no_bind_parameters_pg),
    GuardRule(no_operator_syntax, no_operator_syntax_pg),
    GuardRule(no_system_catalogs, no_system_catalogs_pg),
    GuardRule(no_outdb_rasters, no_outdb_rasters_pg, tokens=True),
    GuardRule(spatial_policy, spatial_policy_pg),
    GuardRule(allowed_functions, allowed_functions_pg, tokens=True),
    GuardRule(topk_contract, topk_contract_pg),
)
"""The policy rules in order; ``tokens=True`` where the sqlglot check also judges unparsed text."""

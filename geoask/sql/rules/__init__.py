"""Guard rules: one module per rule, each carrying its rule on both parsers' readings.

A rule module exports its check on sqlglot's reading, a function named like the module: it
takes the parsed query and the guard context and returns a
:class:`~geoask.sql.violation.GuardViolation` or None. Where the policy can be read on
PostgreSQL's own parse tree too, the module also exports ``<rule>_pg``: it takes the
:class:`~geoask.sql.pgview.PgView` and the context and returns a
:class:`~geoask.sql.violation.PgViolation` or None. One
:class:`~geoask.sql.rule.GuardRule` line per rule binds the two and fixes the order
(:data:`~geoask.sql.policies.POLICY_RULES`).

The guard runs every rule's sqlglot check in that order; ``postgres_view`` then runs every
rule's PostgreSQL check in the same order (the first failure is reported under the rule's name),
``parsers_agree`` compares the two readings, and ``parses`` comes last.

Rules marked ``tokens=True`` (:data:`TOKEN_RULES`) also judge text that sqlglot cannot parse (on
its tokens); the others need the tree and are skipped for such text, and ``parses`` comes last to
report it. So a statement's verdict does not depend on whether a given sqlglot release parses it.
Text that only PostgreSQL's grammar parses (``a &&& b``) is accepted when every policy holds on
its reading (see :mod:`geoask.guard <geoask.sql.guard>`).

Adding a rule:

1. one new module ``geoask/sql/rules/<rule>.py`` with ``RULE = "<rule>"``, the sqlglot check
   ``<rule>(query, context)`` and, if PostgreSQL's reading shows the policy, ``<rule>_pg(view,
   context)`` - each with a docstring example;
2. one line in the rule tuple :data:`geoask.sql.policies.POLICY_RULES`, where the rule runs:
   ``GuardRule(<rule>, <rule>_pg)`` (``tokens=True`` if the sqlglot check also judges unparsed
   text). :data:`RULES` is that tuple followed by the three rules of the second reading
   (``postgres_view``, ``parsers_agree``, ``parses``); it lives in its own module because
   ``postgres_view`` reads it and this package imports ``postgres_view``;
3. fixtures: ``tests/fixtures/sql/rejected/`` cases naming the rule, and allowed cases that
   must still pass.

The package also re-exports each rule's sqlglot check by name (``from geoask.sql.rules import
no_row_locks``) for the table-driven rule tests; add the new one's import there too.
"""

from __future__ import annotations

from geoask.sql.policies import POLICY_RULES
from geoask.sql.rule import GuardRule
from geoask.sql.rules.allowed_functions import allowed_functions
from geoask.sql.rules.lexical_safety import lexical_safety
from geoask.sql.rules.no_bind_parameters import no_bind_parameters
from geoask.sql.rules.no_data_modification import no_data_modification
from geoask.sql.rules.no_operator_syntax import no_operator_syntax
from geoask.sql.rules.no_outdb_rasters import no_outdb_rasters
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

RULES: tuple[GuardRule, ...] = (
    *POLICY_RULES,
    GuardRule(postgres_view, tokens=True),
    GuardRule(parsers_agree, tokens=True),
    GuardRule(parses, tokens=True),
)
"""The guard's rules in the order they run; the first failure is reported."""

TOKEN_RULES = frozenset(rule for rule in RULES if rule.tokens)
"""Rules that decide on the tokens when sqlglot could not build a tree."""

__all__ = [
    "RULES",
    "TOKEN_RULES",
    "GuardRule",
    "allowed_functions",
    "lexical_safety",
    "no_bind_parameters",
    "no_data_modification",
    "no_operator_syntax",
    "no_outdb_rasters",
    "no_row_locks",
    "no_select_into",
    "no_system_catalogs",
    "parsers_agree",
    "parses",
    "postgres_view",
    "query_only",
    "single_statement",
    "spatial_policy",
    "topk_contract",
]

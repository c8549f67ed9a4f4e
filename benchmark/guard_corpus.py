"""Share of a legitimate query corpus the SQL guard accepts under the ``postgis`` policy.

Run: ``.venv/bin/python benchmark/guard_corpus.py [--policy postgis] [--offline]``

The corpus: every allowed guard fixture (``tests/fixtures/sql/allowed``) and every verified
gold SQL statement of the benchmark (``benchmark/cases``, ``benchmark/databases/*/cases``).
Under ``postgis`` the allow-list includes the PostGIS functions the configured database's
catalog offers (``--offline``: the hand-kept list only). Prints the accepted share and each
refusal with its rule.
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path

from geoask.base.yamlio import load_yaml
from geoask.settings import get_settings
from geoask.sql import GuardContext, find_violation
from geoask.sql.casefile import load_case_folder
from geoask.sql.catalog_functions import catalog_postgis_functions

ROOT = Path(__file__).resolve().parents[1]


def gold_statements() -> list[tuple[str, str]]:
    """``(source, sql)`` of every gold SQL statement in the benchmark case files."""
    found: list[tuple[str, str]] = []

    def walk(value: object, source: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "sql" and isinstance(item, str):
                    found.append((source, item))
                else:
                    walk(item, source)
        elif isinstance(value, list):
            for item in value:
                walk(item, source)

    paths = sorted((ROOT / "benchmark" / "cases").glob("*.yaml"))
    paths += sorted((ROOT / "benchmark" / "databases").glob("*/cases/*.yaml"))
    for path in paths:
        walk(load_yaml(path.read_text(encoding="utf-8")), str(path.relative_to(ROOT)))
    return found


def main() -> None:
    """Parse options, judge the corpus, print the share and the refusals."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", default="postgis", choices=("postgis", "separated"))
    parser.add_argument("--offline", action="store_true", help="hand-kept function list only")
    args = parser.parse_args()
    functions = frozenset() if args.offline else catalog_postgis_functions(get_settings())
    context = GuardContext(policy=args.policy, extension_functions=functions)
    fixtures = [(case.source, case.sql)
                for case in load_case_folder(ROOT / "tests" / "fixtures" / "sql" / "allowed")]
    source_note = (" (hand list only)" if not functions
                   else f" (+{len(functions)} catalog functions)")
    for label, corpus in (("allowed fixtures", fixtures), ("gold SQL", gold_statements())):
        distinct = dict((sql, source) for source, sql in corpus)
        refused: collections.Counter[str] = collections.Counter()
        for sql, source in distinct.items():
            violation = find_violation(sql, context)
            if violation is not None:
                refused[violation.rule] += 1
                print(f"  refused ({violation.rule}) {source}: {' '.join(sql.split())[:100]}")
        accepted = len(distinct) - sum(refused.values())
        print(f"{label}: {accepted}/{len(distinct)} distinct statements accepted "
              f"({100 * accepted / len(distinct):.1f} %) under {args.policy}"
              f"{source_note}"
              f"; refused by rule: {dict(refused) or 'none'}")


if __name__ == "__main__":
    main()

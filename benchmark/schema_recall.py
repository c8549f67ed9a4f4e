"""Run ``.venv/bin/python benchmark/schema_recall.py``: recall of schema retrieval.

Does retrieval find the tables the benchmark's verified programs read?
For every case: the question is retrieved as the pipeline does it (``retrieve_schema``: the
reference intent's time step and years as hard filters), and the subset is compared with the
tables the case's reference SQL statements read (parsed with sqlglot; CTEs excluded). A table
counts as found when it, or an accepted alternative (``nc_counties`` for ``us_counties`` and
back: both hold North Carolina's counties), is in the subset.

Prints: table recall, questions with every table found, the misses, mean tables and mean
WordPiece tokens of the rendered subset and of its outline. Exit code 1 if recall < 0.98.
Options: ``--verbose`` (every case), ``--cases DIR`` (default benchmark/cases).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from geoask.cases.loader import DEFAULT_CASES_DIR, load_cases
from geoask.models.reference.intent import case_intent
from geoask.models.scripted import count_tokens
from geoask.retrieval.service import open_retriever
from geoask.sql.shape import tables_read
from tasks.question import retrieval_intent

ALTERNATIVES = {"nc_counties": {"us_counties"}, "us_counties": {"nc_counties"}}
TARGET_RECALL = 0.98


def main() -> int:
    """Evaluate and print; 1 if recall is below the target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES_DIR)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()

    retriever = open_retriever()
    needed_total = found_total = complete = 0
    tables, tokens, outline_tokens = [], [], []
    loaded = load_cases(args.cases)
    for item in loaded:
        case = item.case
        subset = retriever.retrieve(case.question, retrieval_intent(case_intent(case)))
        shown = set(subset.table_names)
        needed = {name for step in case.reference.steps if step.kind == "sql"
                  for statement in step.statements for name in tables_read(statement.sql) or []}
        missing = sorted(n for n in needed if n not in shown and not ALTERNATIVES.get(n, set())
                         & shown)
        needed_total += len(needed)
        found_total += len(needed) - len(missing)
        complete += not missing
        tables.append(len(shown))
        tokens.append(subset.token_count)
        outline_tokens.append(count_tokens(subset.outline_text))
        if missing or args.verbose:
            mark = "MISS " + ",".join(missing) if missing else "ok"
            print(f"{case.id:<14} {mark:<32} {subset.table_names}")
    recall = found_total / needed_total
    print()
    print(f"cases:               {len(loaded)} ({needed_total} tables read by reference SQL)")
    print(f"table recall:        {recall:.4f} ({found_total}/{needed_total}); "
          f"{complete}/{len(loaded)} questions with every table")
    print(f"tables per subset:   mean {statistics.mean(tables):.2f}, max {max(tables)}")
    print(f"subset tokens:       mean {statistics.mean(tokens):.0f} (prompt text), "
          f"{statistics.mean(outline_tokens):.0f} (outline); WordPiece, shipped tokenizer")
    ok = recall >= TARGET_RECALL
    print(f"target recall >= {TARGET_RECALL}: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

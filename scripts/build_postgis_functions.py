"""Rebuild ``geoask/sql/postgis_functions.txt``: the PostGIS functions ``postgis`` may call.

Run: ``.venv/bin/python scripts/build_postgis_functions.py [--sql FILE ... --release NAME]``

The list is built from PostGIS's own function catalog, not by hand:

* ``pg_proc`` of the PostGIS installed in the configured database (``postgis``,
  ``postgis_raster``, ``postgis_sfcgal`` where installed): every function the extension owns
  that the server declares ``IMMUTABLE`` or ``STABLE``, a plain, aggregate or window function
  (the query of :data:`geoask.sql.catalog_functions.DERIVE_SQL`);
* optionally, PostGIS's install scripts of a newer release (``--sql postgis/postgis.sql.in
  --sql raster/rt_pg/rtpostgis.sql.in`` of a PostGIS source tree): every ``CREATE FUNCTION``
  declared ``IMMUTABLE`` or ``STABLE`` and every ``CREATE AGGREGATE`` (the server records
  aggregates as immutable), so that statements written for a newer PostGIS are judged by what
  they call, not refused for a name the installed release lacks (the server reports an unknown
  function itself).

Both pass the one filter of :func:`geoask.sql.catalog_functions.is_derivable`: no argument or
result of a pseudo-type (index support, type input/output), no internal helper (leading ``_``,
``pgis_``, ``pg_``), no version or administration function (``postgis_*`` but the
``postgis_srs*`` lookups and transforms) and nothing on
:data:`geoask.sql.functions.REFUSED_FUNCTIONS` (files, out-of-database rasters, GDAL's file
access, SQL text run, management and metadata). Names that are also PostgreSQL built-ins
(``text``, ``box``, ``point``: PostGIS's cast functions) are left out.
Prints what it kept and left out; writes the file sorted, one name a line, under a header that
says where the names came from.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import psycopg

from geoask.db.urls import owner_url
from geoask.settings import get_settings
from geoask.sql.catalog_functions import (
    DERIVE_SQL,
    POSTGIS_EXTENSIONS,
    REFUSED_TYPES,
    is_derivable,
    refuses_type,
)
from geoask.sql.postgis_functions import CATALOG_FILE

_CREATE = re.compile(
    r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(FUNCTION|AGGREGATE)\s+([\w.]+)\s*\(", re.I | re.M)
_DOLLAR_BODY = re.compile(r"\$(\w*)\$.*?\$\1\$", re.S)
_VOLATILITY = re.compile(r"\b(IMMUTABLE|STABLE|VOLATILE)\b", re.I)
BUILTINS_SQL = "SELECT DISTINCT proname FROM pg_catalog.pg_proc WHERE pronamespace = " \
    "'pg_catalog'::regnamespace"


def installed_functions(connection: psycopg.Connection) -> set[str]:
    """IMMUTABLE/STABLE functions of the installed PostGIS extensions (``pg_proc``)."""
    rows = connection.execute(DERIVE_SQL, {
        "extensions": list(POSTGIS_EXTENSIONS), "refused_types": list(REFUSED_TYPES),
    }).fetchall()
    return {name for (name,) in rows}


def script_functions(text: str) -> set[str]:
    """IMMUTABLE/STABLE functions and the aggregates an install script creates.

    >>> sorted(script_functions('''CREATE OR REPLACE FUNCTION ST_HasZ(geometry)
    ...   RETURNS boolean AS 'MODULE_PATHNAME' LANGUAGE 'c' IMMUTABLE STRICT;
    ... CREATE FUNCTION st_x_in(cstring) RETURNS geometry LANGUAGE c IMMUTABLE;
    ... CREATE FUNCTION ST_Rand(geometry) RETURNS geometry LANGUAGE c;
    ... CREATE AGGREGATE ST_CoverageUnion (geometry) (SFUNC = f, STYPE = internal);''')))
    ['st_coverageunion', 'st_hasz']
    """
    found: set[str] = set()
    matches = list(_CREATE.finditer(text))
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        statement = _DOLLAR_BODY.sub("", text[match.start():end])
        name = match.group(2).rsplit(".", 1)[-1].lower()
        arguments = statement[match.end() - match.start():].split(")", 1)[0]
        if any(refuses_type(word) for word in re.findall(r"\w+", arguments.lower())):
            continue
        if match.group(1).upper() == "AGGREGATE":
            found.add(name)
            continue
        returns = re.search(r"RETURNS\s+(?:SETOF\s+)?([\w.\[\]]+)", statement, re.I)
        if returns and refuses_type(returns.group(1).lower()):
            continue
        volatility = _VOLATILITY.findall(statement)
        if volatility and volatility[-1].upper() in ("IMMUTABLE", "STABLE"):
            found.add(name)
    return found


def main() -> None:
    """Read the catalogs, filter, print the counts and write the file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sql", type=Path, action="append", default=[],
                        help="a PostGIS install script (.sql or .sql.in) of a newer release")
    parser.add_argument("--release", default="",
                        help="which PostGIS release or commit the --sql scripts come from")
    parser.add_argument("--out", type=Path, default=CATALOG_FILE)
    args = parser.parse_args()
    with psycopg.connect(owner_url(get_settings())) as connection:
        version = connection.execute(
            "SELECT string_agg(extname || ' ' || extversion, ', ' ORDER BY extname) FROM "
            "pg_extension WHERE extname = ANY(%s)", [list(POSTGIS_EXTENSIONS)]).fetchone()
        builtins = {name for (name,) in connection.execute(BUILTINS_SQL).fetchall()}
        names = installed_functions(connection)
    sources = [f"pg_proc of {version[0] if version else 'no PostGIS'}"]
    for path in args.sql:
        added = script_functions(path.read_text(encoding="utf-8")) - names
        names |= added
        sources.append(f"{path.name}{' of ' + args.release if args.release else ''} "
                       f"(+{len(added)})")
    kept = sorted(name for name in names if is_derivable(name) and name not in builtins)
    left_out = sorted(names - set(kept))
    header = [
        "# PostGIS functions the `postgis` policy may call: IMMUTABLE or STABLE, read-only.",
        "# Generated by scripts/build_postgis_functions.py - do not edit; rerun it instead.",
        f"# Sources: {'; '.join(sources)}.",
    ]
    args.out.write_text("\n".join([*header, *kept, ""]), encoding="utf-8")
    print(f"wrote {len(kept)} names to {args.out} from {'; '.join(sources)}")
    print(f"left out {len(left_out)}: {', '.join(left_out)}", file=sys.stderr)


if __name__ == "__main__":
    main()

"""``geoask sql``: check SQL with the guard, or run it read-only and export the result.

Run ``geoask sql check query.sql`` (exit 0: prints the SQL that would run; exit 2: prints the
rule that failed) or ``geoask sql run query.sql --out DIR`` (executes as the reader role,
writes ``result.geojson``/``result.json`` and ``result.preview.json`` to DIR, prints the preview).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import NoReturn

import typer

from geoask.base.capped_input import read_capped_text
from geoask.base.formats import EXPORT_FORMATS
from geoask.errors import ConfigurationError, GeoaskError, QueryRejectedError
from geoask.settings import Settings, get_settings
from geoask.sql.context import AnswerContract, GuardContext, SpatialPolicy
from geoask.sql.guard import CheckedQuery, check_sql

app = typer.Typer(
    help="Check SQL with the read-only guard, or run it and export the result.",
    no_args_is_help=True,
)

def _policy(value: str | None) -> SpatialPolicy | None:
    """``--policy`` as a :class:`SpatialPolicy`; an unknown one is one usage line."""
    if value is None:
        return None
    try:
        return SpatialPolicy(value.strip().lower())
    except ValueError:
        raise typer.BadParameter(f"{value!r} is no spatial policy; use one of "
                                 f"{', '.join(p.value for p in SpatialPolicy)}") from None


POLICY_OPTION = typer.Option(
    None, "--policy", envvar="GEOASK_SQL_POLICY", parser=_policy, metavar="[separated|postgis]",
    help="Spatial policy: 'separated' (default; spatial computation is done in Python) or "
    "'postgis' (spatial computation in SQL allowed).",
)
CONTRACT_OPTION = typer.Option(
    AnswerContract.NONE, "--contract", case_sensitive=False,
    help="Answer contract of the step: 'topk' requires an outer ORDER BY and LIMIT.",
)
SOURCE_ARGUMENT = typer.Argument("-", help="File holding one SQL query, or '-' for standard input.")


SQL_CAP_SETTING = "GEOASK_SQL_MAX_CHARS"
_FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,63}")


def _file_name(name: str) -> str:
    """``--name`` as a plain file name: no folders, no hidden files, nothing outside --out."""
    if not _FILE_NAME.fullmatch(name):
        raise typer.BadParameter(
            f"{name!r} is not a plain file name: use 1-64 letters, digits, _ or - "
            "(not starting with -)")
    return name



@app.command("check")
def check_command(
    source: str = SOURCE_ARGUMENT,
    policy: SpatialPolicy | None = POLICY_OPTION,
    contract: AnswerContract = CONTRACT_OPTION,
) -> None:
    """Print the SQL that would run (exit 0), or the guard rule that refused it (exit 2)."""
    checked = _checked(source, policy, contract)
    typer.echo(checked.sql)


@app.command("run")
def run_command(
    out: str = typer.Option(..., "--out", help="Artifact folder (local path or fsspec URL)."),
    source: str = SOURCE_ARGUMENT,
    policy: SpatialPolicy | None = POLICY_OPTION,
    contract: AnswerContract = CONTRACT_OPTION,
    name: str = typer.Option("result", "--name", callback=_file_name,
                             help="Base name of the files written (letters, digits, _ and -)."),
) -> None:
    """Check, execute read-only as the reader role, export to --out and print the preview."""
    from geoask.sql.executor import PostgresSqlRunner
    from geoask.sql.step import run_statement

    if not out.strip():
        raise ConfigurationError("--out needs a folder (local path or fsspec URL) to write to")
    settings = get_settings()
    from geoask.base.storage import filesystem_for

    filesystem_for(out)  # an unusable --out fails before the query runs
    sql = _read_source(source)
    try:
        run = run_statement(sql, _context(settings, policy, contract),
                            PostgresSqlRunner.from_settings(settings), out, name=name,
                            preview_rows=settings.sql_preview_rows)
    except QueryRejectedError as rejection:
        _report_rejection(rejection)
    exported = run.exported
    _remove_stale_outputs(out, name, keep=exported.data_path)
    from geoask.base.result_view import printable

    typer.echo(printable(exported.preview.to_text()))  # database values: escapes shown, not run
    typer.echo(f"wrote {exported.data_path} ({exported.format}) and {exported.preview_path}")


def _remove_stale_outputs(out: str, name: str, *, keep: str) -> None:
    """Drop an earlier run's ``<name>.json``, ``.geojson``... (any export format) but ``keep``."""
    from geoask.base.storage import filesystem_for

    fs, root = filesystem_for(out)
    _, kept = filesystem_for(keep)
    for fmt in EXPORT_FORMATS:
        path = f"{root.rstrip('/')}/{fmt.file_name(name)}"
        if path != kept and fs.exists(path):
            fs.rm(path)


def _context(
    settings: Settings, policy: SpatialPolicy | None, contract: AnswerContract
) -> GuardContext:
    from geoask.catalog.model import load_catalog

    return GuardContext.from_settings(settings, policy=policy, contract=contract,
                                      catalog=load_catalog(settings.catalog_path))


def _checked(
    source: str, policy: SpatialPolicy | None, contract: AnswerContract
) -> CheckedQuery:
    sql = _read_source(source)
    try:
        return check_sql(sql, _context(get_settings(), policy, contract))
    except QueryRejectedError as rejection:
        _report_rejection(rejection)


def _report_rejection(rejection: QueryRejectedError) -> NoReturn:
    """Print which rule refused the SQL, where and why; exit with the guard's code (2)."""
    typer.echo(f"rejected by rule: {rejection.rule}")
    if rejection.line is not None:
        typer.echo(f"at line {rejection.line}, col {rejection.col}")
    if rejection.fragment:
        typer.echo(f"fragment: {rejection.fragment}")
    typer.echo(rejection.description)
    raise typer.Exit(code=rejection.exit_code) from None


def _read_source(source: str) -> str:
    """The SQL of ``source``, read with the guard's cap (at most ``sql_max_chars`` + 1)."""
    cap = get_settings().sql_max_chars
    if source == "-":
        try:  # utf-8-sig: a leading BOM is no SQL
            return read_capped_text(sys.stdin.buffer, cap, what="SQL from standard input",
                                    setting=SQL_CAP_SETTING, encoding="utf-8-sig")
        except UnicodeDecodeError as error:
            raise GeoaskError(f"cannot read SQL from standard input: {error}") from None
    path = Path(source)
    try:
        return read_capped_text(path, cap, what=f"SQL file {path}", setting=SQL_CAP_SETTING,
                                encoding="utf-8-sig")
    except FileNotFoundError:
        raise GeoaskError(f"SQL file {path} does not exist; pass a file or '-'") from None
    except (OSError, UnicodeDecodeError) as error:
        raise GeoaskError(f"cannot read SQL file {path}: {error}") from None

"""Read guard fixture files: SQL cases with one title line each, addable without Python.

Format (``tests/fixtures/sql/allowed/*.sql``, ``tests/fixtures/sql/rejected/*.sql``)::

    # Lines starting with "# " before the first case are notes for humans.
    @policy separated postgis      <- optional: policies to check every case under
    @contract topk                 <- optional: answer contract of every case
    ### title of the case => expected_rule
    SELECT ...                     <- the statement: every line up to the next "### "

``=> expected_rule`` is optional (rejected cases only): the rule that must fail.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from geoask.base.capped_input import MAX_DOCUMENT_CHARS, read_capped_text
from geoask.errors import GeoaskError

TITLE_MARK = "### "


@dataclass(frozen=True)
class SqlCase:
    """One fixture case.

    Attributes:
        title: what the case shows (the title line without its mark).
        sql: the statement, exactly as in the file (inner newlines kept).
        policies: spatial policies to check it under.
        contract: answer contract (``none`` or ``topk``).
        expected_rule: for rejected cases, the rule that must fail, if stated.
        source: ``file:line`` of the title line.

    """

    title: str
    sql: str
    policies: tuple[str, ...]
    contract: str
    expected_rule: str | None
    source: str


def load_cases(path: Path) -> list[SqlCase]:
    """Parse one fixture file.

    Raises:
        GeoaskError: a case has an empty statement or a directive is unknown.

    """
    policies: tuple[str, ...] = ("separated",)
    contract = "none"
    cases: list[SqlCase] = []
    title: str | None = None
    title_line = 0
    body: list[str] = []

    def flush() -> None:
        if title is None:
            return
        sql = "\n".join(body).strip("\n")
        if not sql.strip():
            raise GeoaskError(f"{path}:{title_line}: case {title!r} has no SQL")
        name, _, rule = title.partition(" => ")
        cases.append(
            SqlCase(name.strip(), sql, policies, contract, rule.strip() or None,
                    f"{path.name}:{title_line}")
        )

    text = read_capped_text(path, MAX_DOCUMENT_CHARS, what=f"SQL case file {path}")
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith(TITLE_MARK):
            flush()
            title, title_line, body = line[len(TITLE_MARK) :].strip(), number, []
        elif title is not None:
            body.append(line)
        elif line.startswith("@policy "):
            policies = tuple(line.split()[1:])
        elif line.startswith("@contract "):
            contract = line.split()[1]
        elif line.strip() and not line.startswith("#"):
            raise GeoaskError(f"{path}:{number}: unexpected line before the first case: {line!r}")
    flush()
    return cases


def load_case_folder(folder: Path) -> list[SqlCase]:
    """All cases of every ``*.sql`` file in ``folder``, in file-name order."""
    return [case for path in sorted(folder.glob("*.sql")) for case in load_cases(path)]

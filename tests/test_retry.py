import psycopg
import pytest

from geoask.errors import DataValidationError
from geoask.retry import is_transient


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (psycopg.OperationalError("connection refused"), True),
        (psycopg.errors.AdminShutdown("terminating connection"), True),
        (psycopg.errors.QueryCanceled("statement timeout"), False),
        (psycopg.errors.UndefinedColumn("column x does not exist"), False),
        (psycopg.errors.ForeignKeyViolation("fk"), False),
        (DataValidationError("3 rows, catalog expects 4"), False),
        (ValueError("bad"), False),
    ],
)
def test_only_transient_errors_are_retried(error, expected):
    assert is_transient(error) is expected

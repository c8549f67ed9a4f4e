import httpx
import psycopg
import pytest
from pydantic_ai.exceptions import ModelConnectionError, ModelHTTPError

from geoask.errors import (
    DatabaseError,
    DataValidationError,
    ModelCallError,
    QueryExecutionError,
    SandboxError,
    ServiceError,
)
from geoask.models.retry import is_infrastructure_failure, is_transient


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


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (DatabaseError("could not connect to the database"), True),
        (psycopg.OperationalError("connection refused"), True),
        (psycopg.errors.QueryCanceled("statement timeout"), False),
        (ModelCallError("sql", "model endpoint http://x/v1 refused the connection",
                        transient=True), True),
        (ModelCallError("sql", "the endpoint refused the API key"), False),
        (ModelConnectionError("x", "Connection error."), True),
        (ModelHTTPError(503, "m"), True),
        (ModelHTTPError(400, "m"), False),
        (SandboxError("bubblewrap is not installed"), True),
        (ServiceError("the Prefect API answered 503"), True),
        (httpx.ConnectError("connection refused"), True),
        (QueryExecutionError("undefined_column", "column x does not exist"), False),
        (DataValidationError("3 rows, catalog expects 4"), False),
        (ValueError("a bug"), False),
    ],
)
def test_infrastructure_failures_are_told_from_the_runs_own(error, expected):
    assert is_infrastructure_failure(error) is expected

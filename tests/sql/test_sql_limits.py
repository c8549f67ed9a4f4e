"""Results too large for memory are refused, not fetched; a bad URL is a clear error."""

from __future__ import annotations

import pytest

from geoask.errors import DatabaseError, QueryExecutionError
from geoask.sql.context import GuardContext
from geoask.sql.executor import PostgresSqlRunner
from geoask.sql.guard import check_sql

pytestmark = pytest.mark.db


def test_result_over_the_size_limit_is_refused(reader_url):
    runner = PostgresSqlRunner(reader_url, max_result_mib=1)
    checked = check_sql("SELECT g, repeat('x', 100000) AS pad FROM generate_series(1, 50) AS g",
                        GuardContext())
    with pytest.raises(QueryExecutionError) as caught:
        runner.run(checked)
    assert caught.value.kind == "result_too_large"
    assert "passed 1 MiB after 11 rows" in str(caught.value)


def test_result_under_the_size_limit_is_fetched(reader_url):
    runner = PostgresSqlRunner(reader_url, max_result_mib=1)
    checked = check_sql("SELECT g, repeat('x', 100000) AS pad FROM generate_series(1, 10) AS g",
                        GuardContext())
    result = runner.run(checked)
    assert result.row_count == 10


@pytest.mark.parametrize("url", ["notaurl", "postgresql://nobody@127.0.0.1:1/none"])
def test_unusable_url_is_a_database_error(url):
    with pytest.raises(DatabaseError, match="could not connect to the database"):
        PostgresSqlRunner(url, connect_timeout_s=2).run(check_sql("SELECT 1", GuardContext()))

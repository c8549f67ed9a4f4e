"""Fetching in batches: a short batch ends the result (no further FETCH), the caps still refuse."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from geoask.errors import QueryExecutionError
from geoask.sql.fetch import Fetch


class _Source:
    """Rows of a streamed result, counting the pulls made after its end."""

    def __init__(self, rows: int) -> None:
        self.left, self.pulls_after_end = rows, 0

    def __iter__(self) -> _Source:
        return self

    def __next__(self) -> tuple[Any, ...]:
        if self.left == 0:
            self.pulls_after_end += 1
            raise StopIteration
        self.left -= 1
        return (self.left,)


class _Described:
    description = None


def test_a_streamed_result_that_ends_early_is_not_read_again():
    source = _Source(3)
    fetch = Fetch(source, _Described(), frozenset(), row_cap=100, max_bytes=10**6)
    assert len(fetch.head(10)) == 3
    assert list(fetch.batches()) == []
    assert source.pulls_after_end == 1


def test_a_streamed_result_one_row_past_the_cap_is_refused():
    fetch = Fetch(_Source(11), _Described(), frozenset(), row_cap=10, max_bytes=10**6)
    with pytest.raises(QueryExecutionError, match="more than 10 rows"):
        fetch.head(100)


class _CountingCursor(psycopg.ServerCursor[Any]):
    fetches = 0

    def fetchmany(self, size: int = 0) -> list[Any]:
        self.fetches += 1
        return super().fetchmany(size)


@pytest.mark.db
@pytest.mark.parametrize(("rows", "cap", "fetches"), [(3, 10, 1), (10, 10, 1), (0, 10, 1)])
def test_a_server_side_cursor_is_fetched_a_batch_at_a_time(reader_url, rows, cap, fetches):
    with psycopg.connect(reader_url) as connection, connection.transaction():
        cursor = _CountingCursor(connection, "geoask_fetch_test")
        cursor.execute("SELECT g FROM generate_series(1, %s) AS g", [rows])
        fetch = Fetch(iter(cursor), cursor, frozenset(), row_cap=cap, max_bytes=10**6)
        got = fetch.head(100) + [row for batch in fetch.batches() for row in batch]
        assert [row[0] for row in got] == list(range(1, rows + 1))
        assert cursor.fetches == fetches


@pytest.mark.db
def test_a_server_side_cursor_past_the_cap_is_refused_after_one_row_more(reader_url):
    with psycopg.connect(reader_url) as connection, connection.transaction():
        cursor = _CountingCursor(connection, "geoask_fetch_test")
        cursor.execute("SELECT g FROM generate_series(1, 1000) AS g")
        fetch = Fetch(iter(cursor), cursor, frozenset(), row_cap=10, max_bytes=10**6)
        with pytest.raises(QueryExecutionError, match="more than 10 rows"):
            fetch.head(100)
        assert fetch.rows == 11

"""The geoask_reader role itself (no guard in front) cannot write, create, escape or run forever."""

from __future__ import annotations

import time

import psycopg
import pytest

from geoask.db.cluster import data_schema

pytestmark = pytest.mark.db


def _first_table(database) -> str:
    return f"{data_schema(database.settings)}.us_states"


@pytest.fixture
def reader(database):
    with psycopg.connect(database.reader_url, autocommit=True) as conn:
        yield conn


def test_reader_defaults(reader):
    settings = dict(reader.execute(
        "SELECT name, setting FROM pg_settings WHERE name IN "
        "('default_transaction_read_only', 'statement_timeout')").fetchall())
    assert settings == {"default_transaction_read_only": "on", "statement_timeout": "30000"}
    assert reader.execute("SELECT rolsuper, rolcreatedb, rolcreaterole FROM pg_roles "
                          "WHERE rolname = current_user").fetchone() == (False, False, False)


@pytest.mark.parametrize(
    ("statement", "error"),
    [
        ("INSERT INTO {t} (state_fips) VALUES ('99')", psycopg.errors.ReadOnlySqlTransaction),
        ("UPDATE {t} SET state_name = 'x'", psycopg.errors.ReadOnlySqlTransaction),
        ("DELETE FROM {t}", psycopg.errors.ReadOnlySqlTransaction),
        ("CREATE TABLE demo.evil (x int)", psycopg.errors.ReadOnlySqlTransaction),
        ("CREATE TEMP TABLE evil (x int)", psycopg.errors.ReadOnlySqlTransaction),
        # PostgreSQL lets any role change its own session defaults; only the read-only
        # transaction (and the guard, and `geoask db up` re-applying them) stand in the way.
        ("ALTER ROLE geoask_reader SET default_transaction_read_only = off",
         psycopg.errors.ReadOnlySqlTransaction),
    ],
)
def test_read_only_transaction_blocks_writes(reader, database, statement, error):
    with pytest.raises(error):
        reader.execute(statement.format(t=_first_table(database)))


@pytest.mark.parametrize(
    ("statement", "error"),
    [
        ("INSERT INTO {t} (state_fips) VALUES ('99')", psycopg.errors.InsufficientPrivilege),
        ("TRUNCATE {t}", psycopg.errors.InsufficientPrivilege),
        ("CREATE TABLE demo.evil (x int)", psycopg.errors.InsufficientPrivilege),
        ("CREATE TABLE public.evil (x int)", psycopg.errors.InsufficientPrivilege),
        ("CREATE TEMP TABLE evil (x int)", psycopg.errors.InsufficientPrivilege),
        ("SELECT * FROM geoask_meta.load_state", psycopg.errors.InsufficientPrivilege),
        ("SELECT pg_read_file('/etc/passwd')", psycopg.errors.InsufficientPrivilege),
        ("COPY (SELECT 1) TO PROGRAM 'id'", psycopg.errors.InsufficientPrivilege),
        ("SELECT lo_import('/etc/passwd')", psycopg.errors.InsufficientPrivilege),
        ("SELECT pg_terminate_backend(pg_backend_pid())", psycopg.errors.InsufficientPrivilege),
        ("SELECT pg_cancel_backend(pg_backend_pid())", psycopg.errors.InsufficientPrivilege),
    ],
)
def test_privileges_block_writes_even_in_a_read_write_transaction(reader, database, statement,
                                                                  error):
    """Even if a statement flips the transaction to READ WRITE, the role lacks the rights."""
    with reader.transaction():
        reader.execute("SET TRANSACTION READ WRITE")
        with pytest.raises(error):
            reader.execute(statement.format(t=_first_table(database)))


def test_statement_timeout_cancels_long_queries(reader):
    started = time.monotonic()
    with pytest.raises(psycopg.errors.QueryCanceled):
        reader.execute("SELECT pg_sleep(40)")
    elapsed = time.monotonic() - started
    assert 29 <= elapsed < 39


def test_only_loopback_is_listened_on(reader):
    assert reader.execute("SHOW listen_addresses").fetchone() == ("127.0.0.1",)

"""The reader role's database session, kept open from one statement to the next.

A new session for every statement cost more than most screen queries themselves: a new
backend (connection, authentication) and, at its first geometry, PostGIS's library and the
catalog caches loaded again - 25-30 ms a statement on the scale database, where the district
query itself takes 1 ms on a session that ran one before. :class:`ReaderSessions` keeps one
idle session per runner (so per database URL) between statements, as a connection pooler does,
for :data:`KEEP_IDLE_S` at most: an idle reader session held on would stop the database's owner
from dropping or reloading it (``DROP DATABASE ... WITH (FORCE)`` may end only its own role's
sessions - CI saw ``must be a member of the role whose process is being terminated``), so a
session idle that long is closed, and :meth:`ReaderSessions.close` closes it at once (the
program runner calls it when a program ends).

What stays per statement: each statement runs in its own ``READ ONLY`` transaction that is
always rolled back (:mod:`geoask.sql.executor`), and before a session is kept, ``DISCARD ALL``
resets what a rollback leaves behind (session advisory locks, prepared statements, plans). A
session that broke, is still in a transaction, or belongs to the parent of a forked process is
closed, never kept. A kept session the server ended meanwhile (a restart,
``pg_terminate_backend``, ``DROP DATABASE ... WITH (FORCE)``) fails its first command and is
replaced by a new session, once.
"""

from __future__ import annotations

import contextlib
import os
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import psycopg
from psycopg import pq

Prepared = TypeVar("Prepared")

KEEP_IDLE_S = 1.0
"""How long a session is kept idle for the next statement (s): a step's statements follow
each other within milliseconds; a session idle longer is closed."""


class ReaderSessions:
    """Hands out database sessions, keeping one idle session for the next statement.

    Args:
        connect: opens a new session (autocommit off).

    Thread-safe: a statement that finds the kept session taken opens its own; when it ends,
    its session is kept if none is, else closed.

    """

    def __init__(self, connect: Callable[[], psycopg.Connection[Any]]) -> None:
        self._connect = connect
        self._lock = threading.Lock()
        self._idle: list[psycopg.Connection[Any]] = []  # at most one
        self._pid = os.getpid()
        weakref.finalize(self, _close_all, self._idle)

    @contextmanager
    def session(self, prepare: Callable[[psycopg.Connection[Any]], Prepared]
                ) -> Iterator[tuple[psycopg.Connection[Any], Prepared]]:
        """A session and what ``prepare(session)`` (its first commands) returned.

        Raises:
            psycopg.Error: ``prepare`` failed on a new session (a kept one that fails with an
                ``OperationalError`` is replaced first), or what ``connect`` raises.

        """
        connection = self._take()
        try:
            if connection is None:
                connection = self._connect()
                prepared = prepare(connection)
            else:
                try:
                    prepared = prepare(connection)
                except psycopg.OperationalError:  # ended by the server while kept
                    _close(connection)
                    connection = self._connect()
                    prepared = prepare(connection)
            yield connection, prepared
        finally:
            if connection is not None:
                self._give_back(connection)

    def close(self) -> None:
        """Close the kept session (a later statement opens a new one)."""
        with self._lock:
            _close_all(self._idle)

    def _take(self) -> psycopg.Connection[Any] | None:
        with self._lock:
            if self._pid != os.getpid():  # a forked child: the parent's socket is not ours
                self._idle.clear()
                self._pid = os.getpid()
            return self._idle.pop() if self._idle else None

    def _give_back(self, connection: psycopg.Connection[Any]) -> None:
        """Roll back; keep the session, reset, if it is healthy and none is kept, else close."""
        with contextlib.suppress(psycopg.Error):
            connection.rollback()
        if (connection.closed or connection.broken or os.getpid() != self._pid
                or connection.info.transaction_status != pq.TransactionStatus.IDLE):
            _close(connection)
            return
        try:
            connection.autocommit = True  # DISCARD ALL cannot run inside a transaction
            connection.execute("DISCARD ALL")
            connection.autocommit = False
        except psycopg.Error:
            _close(connection)
            return
        with self._lock:
            if not self._idle:
                self._idle.append(connection)
                # a weak reference: the timer must not keep a dropped runner's session alive
                expiry = threading.Timer(KEEP_IDLE_S, _expire, (weakref.ref(self), connection))
                expiry.daemon = True
                expiry.start()
                return
        _close(connection)

    def expire(self, connection: psycopg.Connection[Any]) -> None:
        """Close ``connection`` if it is still the idle one (a statement may have taken it)."""
        with self._lock:
            if connection in self._idle:
                self._idle.remove(connection)
                _close(connection)


def _expire(sessions: weakref.ref[ReaderSessions], connection: psycopg.Connection[Any]) -> None:
    kept = sessions()
    if kept is None:  # the runner was dropped: its idle session is no one's to take
        _close(connection)
    else:
        kept.expire(connection)


def _close(connection: psycopg.Connection[Any]) -> None:
    with contextlib.suppress(psycopg.Error):
        connection.close()


def _close_all(idle: list[psycopg.Connection[Any]]) -> None:
    while idle:
        _close(idle.pop())

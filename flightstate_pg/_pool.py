"""Connections for the store: a tiny thread-safe pool, or any pool with ``connection()``.

Every connection the store uses runs in autocommit mode (the store sends BEGIN/COMMIT
itself, so it controls isolation per transaction), with ``synchronous_commit = on`` (a
commit is durable when it returns), ``TimeZone = UTC`` (timestamps read back as UTC) and
``plan_cache_mode = force_custom_plan`` (``plan_each_execution``; the adapters' own
connections, ``lazy_connection``, get that too).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol

import psycopg
from psycopg import pq

from flightstate_core.support.lazy import LazyConnection
from flightstate_pg._errors import discard_after

__all__ = ["ConnectionSource", "SimplePool", "lazy_connection", "plan_each_execution", "prepare"]

Conn = psycopg.Connection[Any]

_prepared: weakref.WeakSet[Conn] = weakref.WeakSet()
#: Why every statement is planned for its own parameters: psycopg prepares a
#: statement after a few executions, and PostgreSQL may then keep one generic plan for it.
#: The store looks rows up by ``= ANY(array)`` on tables that grow from empty; a generic
#: plan chosen while a table was small keeps its sequential scans after it has grown,
#: until an ANALYZE of that table invalidates it, which on a fresh database can be a
#: minute or more away. Measured: the unit's read (``_read_ahead``) ran 0.2-1.1 s per batch
#: in the latency bench (a fresh database, 15,000 flights) with such a plan, 0.3 ms with a
#: custom one; planning costs a fraction of a millisecond (docs/design.md, "What 1,000
#: messages per second cost").
_PLAN_CACHE_MODE_SINCE = 120000  # plan_cache_mode is a PostgreSQL 12 setting
_prepared_lock = threading.Lock()


class ConnectionSource(Protocol):
    """Anything that lends a connection (``psycopg_pool.ConnectionPool`` qualifies)."""

    def connection(self) -> AbstractContextManager[Conn]:
        """Lend one connection for the duration of the block."""


def plan_each_execution(conn: Conn) -> None:
    """Plan every statement of this session for its own parameters (see
    ``_PLAN_CACHE_MODE_SINCE``); a server older than PostgreSQL 12 has no such setting."""
    if conn.info.server_version >= _PLAN_CACHE_MODE_SINCE:
        conn.execute("SET plan_cache_mode = force_custom_plan")


def prepare(conn: Conn) -> Conn:
    """Apply the store's session settings once per connection."""
    with _prepared_lock:
        if conn in _prepared:
            return conn
    if not conn.autocommit:
        if conn.info.transaction_status != pq.TransactionStatus.IDLE:
            conn.rollback()
        conn.autocommit = True
    conn.execute("SET synchronous_commit = on")
    conn.execute("SET TimeZone = 'UTC'")
    plan_each_execution(conn)
    with _prepared_lock:
        _prepared.add(conn)
    return conn


class SimplePool:
    """Connections opened on demand and kept idle for reuse; broken ones are dropped."""

    def __init__(self, conninfo: str, max_idle: int = 4) -> None:
        self._conninfo = conninfo
        self._max_idle = max_idle
        self._idle: list[Conn] = []
        self._lock = threading.Lock()

    @contextmanager
    def connection(self) -> Iterator[Conn]:
        """Lend a prepared connection; it returns to the pool only if healthy and idle."""
        conn = self._take()
        try:
            yield conn
        except Exception as exc:  # the store raises core errors from driver ones
            if discard_after(exc):
                conn.close()  # read-only session (or ended by the server): never reuse it
            raise
        finally:
            self._give_back(conn)

    def _take(self) -> Conn:
        with self._lock:
            while self._idle:
                conn = self._idle.pop()
                if not (conn.closed or conn.broken):
                    return conn
        return prepare(psycopg.connect(self._conninfo, autocommit=True))

    def _give_back(self, conn: Conn) -> None:
        healthy = not (conn.closed or conn.broken) and (
            conn.info.transaction_status == pq.TransactionStatus.IDLE
        )
        with self._lock:
            if healthy and len(self._idle) < self._max_idle:
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        """Close every idle connection."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


def lazy_connection(
    dsn: str, connect_timeout: int, *, setup: Callable[[Conn], None] | None = None
) -> LazyConnection[Conn]:
    """One autocommit connection outside the store's pool (the lease, the inbox table and
    the outbox keep theirs apart from the store's transactions), opened on first use and
    reopened after a failure or when the server closed it; *setup* runs once per new
    connection (session settings), after ``plan_each_execution``."""

    def connect() -> Conn:
        conn = psycopg.connect(dsn, autocommit=True, connect_timeout=connect_timeout)
        plan_each_execution(conn)
        if setup is not None:
            setup(conn)
        return conn

    return LazyConnection(connect, usable=lambda conn: not conn.closed)

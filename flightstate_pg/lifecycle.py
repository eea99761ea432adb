"""Lifecycle cleanup on PostgreSQL: archive, then remove, flights that have ended
(docs/design.md, "Lifecycle cleanup").

Why it looks like this:

- The rules are pure (``flightstate_core.engine.lifecycle``, which also loads the candidates with
  every related master/codeshare, builds the events and runs the batch loop); this module
  only selects candidates and writes the plan.
- One short transaction per batch (``policy.batch_limit`` candidates): PIPELINE_LOCK is
  taken first (with the leader's epoch, so a fenced ex-leader writes nothing) and held
  only for one batch, so the pump waits at most that long.
- Candidates are pre-selected in SQL (a superset of what the rules allow, walked by key on
  FLIGHT_SCHD_OPDAY_IX / FLIGHT_SCHD_NULLDAY_IX so kept flights are never re-read in the
  same run); ``plan_cleanup`` decides.
- History first: the main row and every detail row go to the ``*_HIST`` twins by
  INSERT ... SELECT (the stored columns, typed twins included), then the current rows are
  deleted and each deletion count must equal its archived count. Any failure before
  COMMIT rolls the batch back: a history failure deletes zero rows.
- A flight not already DELETED gets a tombstone (``schd``, null payload, version + 1) and a
  ``msg`` DELETED notification (MESSAGE_ID NULL, type ``LIFECYCLE``, styp ``CLEANUP``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import date, datetime, timedelta
from functools import partial
from typing import Any, Final

import psycopg
from attrs import frozen

from flightstate_core.domain.catalog import TERMINAL_EVIDENCE_SCALARS
from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import OutboxEvent
from flightstate_core.domain.layout import DETAIL_TABLES, MAIN_TABLE, DetailTable
from flightstate_core.engine.lifecycle import (
    CLEANUP_STEPS,
    CleanupPlan,
    CleanupReport,
    RetentionPolicy,
    check_archived,
    check_removed,
    run_cleanup_batches,
)
from flightstate_core.engine.unit_of_work import locked_transaction as core_locked_transaction
from flightstate_pg._schema import MAIN
from flightstate_pg.store import PgStore
from flightstate_pg.transaction import PgTransaction

__all__ = [
    "CLEANUP_STEPS",
    "CleanupHook",
    "CleanupReport",
    "locked_transaction",
    "run_cleanup",
    "transaction_connection",
]

Conn = psycopg.Connection[Any]
#: Called after each write step of a batch with the step name and the connection (tests).
CleanupHook = Callable[[str, Conn], None]

_EVENT_INSERT: Final = (
    "INSERT INTO MSG_EVENT (TOPIC, EVENT_KEY, PAYLOAD, FLID, STATE_VERSION, KIND, MESSAGE_ID) "
    "VALUES (%s, %s, %s, %s, %s, %s, NULL)"
)


# --------------------------------------------------------------------------- connection


def transaction_connection(tx: PgTransaction) -> Conn:
    """The connection of an open ``PgTransaction`` (for this package's SQL writers)."""
    return tx.connection


@contextmanager
def locked_transaction(store: PgStore, epoch: int | None) -> Iterator[tuple[PgTransaction, Conn]]:
    """The core's locked transaction (``flightstate_core.engine.unit_of_work``, the one place
    PIPELINE_LOCK is taken, fenced by ``epoch``) and its connection."""
    with core_locked_transaction(store, epoch) as tx:
        yield tx, tx.connection


# --------------------------------------------------------------------------- candidates


def _evidence_sql() -> str:
    codes = " OR ".join(f"{code} <> ''" for code in sorted(TERMINAL_EVIDENCE_SCALARS))
    return f"(STATE = 'DELETED' OR {codes} OR FTSS = ANY(%b) OR {_QUIET})"


_QUIET: Final = "COALESCE(UPDATED_AT, CREATED_AT) IS NULL OR COALESCE(UPDATED_AT, CREATED_AT) <= %s"
_DATED: Final = (
    f"SELECT OPERATION_DAY, FLID FROM {MAIN_TABLE} WHERE OPERATION_DAY <= %s "  # noqa: S608
    f"AND (OPERATION_DAY, FLID) > (%s, %s) AND {_evidence_sql()} "
    "ORDER BY OPERATION_DAY, FLID LIMIT %s"
)
_UNDATED: Final = (
    f"SELECT FLID FROM {MAIN_TABLE} WHERE OPERATION_DAY IS NULL AND FLID > %s "  # noqa: S608
    f"AND ({_QUIET}) ORDER BY FLID LIMIT %s"
)


@frozen
class _Walk:
    """Where the candidate walk stands: dated flights by (day, FLID), then undated by FLID."""

    dated: bool = True
    day: date = date.min
    flid: str = ""


def _candidates(tx: PgTransaction, walk: _Walk, size: int, *, now: datetime,
                policy: RetentionPolicy,
                config: CoreConfig) -> tuple[list[str], _Walk | None]:  # fmt: skip
    """The next candidates and the walk position after them (None: nothing left)."""
    conn = tx.connection
    if walk.dated:
        today = now.astimezone(config.airport_tz).date()
        last_day = today - timedelta(days=policy.retention.days + 1)
        params = (last_day, walk.day, walk.flid, sorted(policy.terminal_statuses),
                  now - policy.quiet_period, size)  # fmt: skip
        rows = conn.execute(_DATED, params).fetchall()
        if rows:
            return [row[1] for row in rows], _Walk(True, rows[-1][0], rows[-1][1])
        walk = _Walk(dated=False)
    quiet = now - policy.null_day_quiet
    rows = conn.execute(_UNDATED, (walk.flid, quiet, size)).fetchall()
    if rows:
        return [row[0] for row in rows], _Walk(False, walk.day, rows[-1][0])
    return [], None


# --------------------------------------------------------------------------- writes


def _columns(table: DetailTable) -> tuple[str, ...]:
    names: list[str] = [*table.key_columns, "SOURCE_SEQ"]
    for child in table.children:
        names.append(child.code)
        if child.typed is not None:
            names.append(child.typed)
    return tuple(names)


def _archive_sql(table: str, columns: tuple[str, ...]) -> str:
    listed = ", ".join(columns)
    return (
        f"INSERT INTO {table}_HIST ({listed}, ARCHIVED_AT) "  # noqa: S608 - layout names
        f"SELECT {listed}, %s FROM {table} WHERE FLID = ANY(%b)"
    )


_TABLES: Final = (
    (MAIN_TABLE, MAIN.write_columns),
    *((name, _columns(table)) for name, table in DETAIL_TABLES.items()),
)
_ARCHIVE: Final = tuple((name, _archive_sql(name, columns)) for name, columns in _TABLES)
# Details before the main row: no foreign key removes them with it (PostgreSQL migration
# 0010), and each table's count is checked against what was archived.
_DELETE: Final = tuple(
    (name, f"DELETE FROM {name} WHERE FLID = ANY(%b)")  # noqa: S608 - layout names
    for name, _ in reversed(_TABLES)
)


def _archive_and_delete(conn: Conn, flids: list[str], now: datetime, hook: CleanupHook) -> None:
    archived = {name: conn.execute(sql, (now, flids)).rowcount for name, sql in _ARCHIVE}
    check_archived(archived[MAIN_TABLE], flids)
    hook("history", conn)
    for name, sql in _DELETE:
        check_removed(name, conn.execute(sql, (flids,)).rowcount, archived[name])
    hook("delete", conn)


def _remove(tx: PgTransaction, plan: CleanupPlan, events: Sequence[OutboxEvent], *,
            now: datetime, hook: CleanupHook) -> None:  # fmt: skip
    conn = tx.connection
    _archive_and_delete(conn, list(plan.remove), now, hook)
    rows = [
        (e.topic, e.key, None if e.payload is None else e.payload.decode("utf-8"), e.flid,
         e.state_version, e.kind.value)
        for e in events
    ]  # fmt: skip
    if rows:
        with conn.cursor() as cursor:
            cursor.executemany(_EVENT_INSERT, rows)
    hook("events", conn)


# --------------------------------------------------------------------------- entry point


def _no_hook(_step: str, _conn: Conn) -> None:
    return None


def run_cleanup(
    store: PgStore,
    policy: RetentionPolicy,
    config: CoreConfig,
    *,
    now: datetime,
    epoch: int | None = None,
    limit: int | None = None,
    fault_hook: CleanupHook | None = None,
) -> CleanupReport:
    """Archive and remove every flight the retention rules release, batch by batch.

    ``limit`` caps the candidates examined in this run (None: until none is left);
    ``epoch`` fences the run like a pump transaction; ``fault_hook`` (tests) is called
    after each of ``CLEANUP_STEPS`` inside the batch's transaction. Raises the core error of
    a failed batch (earlier batches stay committed; the failed one changed nothing).
    """
    return run_cleanup_batches(
        store, policy, config, now=now, epoch=epoch, limit=limit, start=_Walk(),
        candidates=partial(_candidates, now=now, policy=policy, config=config),
        remove=partial(_remove, now=now, hook=fault_hook or _no_hook),
    )  # fmt: skip

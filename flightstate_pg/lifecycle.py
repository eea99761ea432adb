"""Lifecycle cleanup on PostgreSQL: archive, then remove, flights that have ended (seed §3.3, §6).

Why it looks like this:

- The rules are pure (``flightstate_core.lifecycle``); this module only selects candidates,
  loads them with every related master/codeshare, and writes the plan.
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

from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from datetime import date, datetime, timedelta
from typing import Any, Final

import psycopg
from attrs import frozen

from flightstate_core.catalog import TERMINAL_EVIDENCE_SCALARS
from flightstate_core.config import CoreConfig
from flightstate_core.errors import PermanentError
from flightstate_core.layout import DETAIL_TABLES, MAIN_TABLE, DetailTable
from flightstate_core.lifecycle import CleanupPlan, RetentionPolicy, plan_cleanup
from flightstate_core.state import FlightState
from flightstate_core.wire import notification
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
CLEANUP_STEPS: Final = ("history", "delete", "events")

LIFECYCLE_TYPE: Final = "LIFECYCLE"
LIFECYCLE_STYP: Final = "CLEANUP"
_EVENT_INSERT: Final = (
    "INSERT INTO MSG_EVENT (TOPIC, EVENT_KEY, PAYLOAD, FLID, STATE_VERSION, KIND, MESSAGE_ID) "
    "VALUES (%s, %s, %s, %s, %s, %s, NULL)"
)


@frozen
class CleanupReport:
    """What one run did.

    ``removed``: flights archived and deleted (``removed_flids``); ``tombstoned``: those
    not already DELETED, each with a tombstone and a DELETED notification; ``kept``: SQL
    candidates the rules kept (a group waiting for a member); ``batches``: transactions.
    """

    removed: int = 0
    tombstoned: int = 0
    kept: int = 0
    batches: int = 0
    removed_flids: tuple[str, ...] = ()

    def plus(self, plan: CleanupPlan, candidates: Collection[str]) -> CleanupReport:
        """This report with one more batch added."""
        removed = set(plan.remove)
        kept = sum(1 for flid in candidates if flid not in removed)
        return CleanupReport(
            self.removed + len(plan.remove), self.tombstoned + len(plan.tombstone),
            self.kept + kept, self.batches + 1, self.removed_flids + plan.remove,
        )  # fmt: skip


# --------------------------------------------------------------------------- connection


def transaction_connection(tx: PgTransaction) -> Conn:
    """The connection of an open ``PgTransaction``.

    Stop-gap: ``PgTransaction`` has no public accessor yet (requested: a ``connection``
    property); this reads it without changing the store.
    """
    conn = getattr(tx, "connection", None) or getattr(tx, "_conn", None)
    if not isinstance(conn, psycopg.Connection):
        raise PermanentError("PgTransaction exposes no connection")
    return conn


@contextmanager
def locked_transaction(store: PgStore, epoch: int | None) -> Iterator[tuple[PgTransaction, Conn]]:
    """A store transaction holding PIPELINE_LOCK (fenced by ``epoch``), and its connection."""
    with store.transaction() as tx:
        tx.lock_pipeline(epoch)
        yield tx, transaction_connection(tx)


# --------------------------------------------------------------------------- candidates


def _evidence_sql() -> str:
    codes = " OR ".join(f"{code} <> ''" for code in sorted(TERMINAL_EVIDENCE_SCALARS))
    return f"(STATE = 'DELETED' OR {codes} OR FTSS = ANY(%s) OR {_QUIET})"


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


def _candidates(conn: Conn, walk: _Walk, *, now: datetime, policy: RetentionPolicy,
                config: CoreConfig, size: int) -> tuple[list[str], _Walk | None]:  # fmt: skip
    """The next candidates and the walk position after them (None: nothing left)."""
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


def _with_related(tx: PgTransaction, flids: list[str]) -> dict[str, FlightState]:
    """The candidates, their masters, and every codeshare of any of them."""
    states = tx.load_flights(flids)
    masters = {
        master
        for state in states.values()
        if (master := state.scalars.get("MAID")) and master != state.flid
    }
    states.update(tx.load_flights(sorted(masters - states.keys())))
    for flid, state in tx.load_codeshares(sorted(states)).items():
        states.setdefault(flid, state)
    return states


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
        f"SELECT {listed}, %s FROM {table} WHERE FLID = ANY(%s)"
    )


_TABLES: Final = (
    (MAIN_TABLE, MAIN.write_columns),
    *((name, _columns(table)) for name, table in DETAIL_TABLES.items()),
)
_ARCHIVE: Final = tuple((name, _archive_sql(name, columns)) for name, columns in _TABLES)
# Details before the main row (the FK cascade would hide their counts).
_DELETE: Final = tuple(
    (name, f"DELETE FROM {name} WHERE FLID = ANY(%s)")  # noqa: S608 - layout names
    for name, _ in reversed(_TABLES)
)


def _archive_and_delete(conn: Conn, flids: list[str], now: datetime, hook: CleanupHook) -> None:
    archived: dict[str, int] = {}
    for name, sql in _ARCHIVE:
        archived[name] = conn.execute(sql, (now, flids)).rowcount
    if archived[MAIN_TABLE] != len(flids):
        raise PermanentError(f"cleanup: archived {archived[MAIN_TABLE]} of {len(flids)} flights")
    hook("history", conn)
    for name, sql in _DELETE:
        deleted = conn.execute(sql, (flids,)).rowcount
        if deleted != archived[name]:
            raise PermanentError(f"cleanup: {name}: deleted {deleted}, archived {archived[name]}")
    hook("delete", conn)


def _events(conn: Conn, plan: CleanupPlan, states: dict[str, FlightState]) -> None:
    rows: list[tuple[Any, ...]] = []
    for flid in plan.tombstone:
        version = states[flid].version + 1
        body = notification(
            flid=flid, state_version=version, change="DELETED", changed=["state"],
            message_id=None, type_=LIFECYCLE_TYPE, styp=LIFECYCLE_STYP,
        )  # fmt: skip
        rows.append(("schd", flid, None, flid, version, "TOMBSTONE"))
        rows.append(("msg", flid, body.decode("utf-8"), flid, version, "NOTIFY"))
    if rows:
        with conn.cursor() as cursor:
            cursor.executemany(_EVENT_INSERT, rows)


# --------------------------------------------------------------------------- entry point


def _no_hook(_step: str, _conn: Conn) -> None:
    return None


def _batch(
    store: PgStore, walk: _Walk, size: int, *, now: datetime, policy: RetentionPolicy,
    config: CoreConfig, epoch: int | None, hook: CleanupHook,
) -> tuple[CleanupPlan, list[str], _Walk | None]:  # fmt: skip
    with locked_transaction(store, epoch) as (tx, conn):
        candidates, after = _candidates(
            conn, walk, now=now, policy=policy, config=config, size=size
        )
        if not candidates:
            return CleanupPlan(), [], None
        states = _with_related(tx, candidates)
        plan = plan_cleanup(states, now, policy, config)
        if plan.remove:
            _archive_and_delete(conn, list(plan.remove), now, hook)
            _events(conn, plan, states)
            hook("events", conn)
        return plan, candidates, after


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
    if policy.batch_limit < 1:
        raise PermanentError("RetentionPolicy.batch_limit must be at least 1")
    report, walk = CleanupReport(), _Walk()
    hook = fault_hook or _no_hook
    remaining = limit
    while remaining is None or remaining > 0:
        size = policy.batch_limit if remaining is None else min(remaining, policy.batch_limit)
        plan, candidates, after = _batch(store, walk, size, now=now, policy=policy,
                                         config=config, epoch=epoch, hook=hook)  # fmt: skip
        if after is None:
            break
        report = report.plus(plan, candidates)
        walk = after
        remaining = None if remaining is None else remaining - len(candidates)
    return report

"""Lifecycle cleanup on Oracle 11g: archive, then remove, flights that have ended
(docs/design.md, "Lifecycle cleanup").

Same entry points and behaviour as ``flightstate_pg.lifecycle`` (the rules, the related-flight
load, the events, the batch loop and ``CleanupReport`` are pure, in
``flightstate_core.engine.lifecycle``); what differs is only how the SQL is said in 11g
(``_sql.lifecycle``):

- One short transaction per batch, PIPELINE_LOCK taken first with the leader's epoch.
- Candidates are walked by key: dated flights by (OPERATION_DAY, FLID) on
  FLIGHT_SCHD_OPDAY_IX, then undated ones by FLID on the function-based
  FLIGHT_SCHD_NULLDAY_IX; ``plan_cleanup`` decides.
- History first: every stored column (typed twins and EMPTY_CODES included, so ``""``
  survives the archive) goes to the ``_HIST`` twin by INSERT .. SELECT, one
  ``executemany`` per table with one bind row per FLID; then the current rows are deleted
  the same way and each deletion count must equal its archived count. Any failure before
  COMMIT rolls the batch back: a history failure deletes zero rows.
- ARCHIVED_AT is bound as UTC into a zone-less TIMESTAMP (it is in the history key, and
  Oracle refuses TIMESTAMP WITH TIME ZONE in a key).
- A flight not already DELETED gets a tombstone and a ``msg`` DELETED notification
  (MESSAGE_ID NULL, type ``LIFECYCLE``, styp ``CLEANUP``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import date, datetime, timedelta
from functools import partial

import oracledb
from attrs import frozen

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import OutboxEvent
from flightstate_core.domain.errors import PermanentError
from flightstate_core.domain.layout import MAIN_TABLE
from flightstate_core.domain.state import FlightState
from flightstate_core.engine.lifecycle import (
    CLEANUP_STEPS,
    CleanupPlan,
    CleanupReport,
    RetentionPolicy,
    check_archived,
    check_removed,
    cleanup_events,
    run_cleanup_batches,
)
from flightstate_core.engine.unit_of_work import locked_transaction as core_locked_transaction
from flightstate_oracle import _sql as sql
from flightstate_oracle._db import query, run_many
from flightstate_oracle._errors import translated
from flightstate_oracle._load import in_params
from flightstate_oracle._presence import to_utc_naive
from flightstate_oracle._rows import Row
from flightstate_oracle.store import OracleStore
from flightstate_oracle.transaction import OracleTransaction

__all__ = [
    "CLEANUP_STEPS",
    "CleanupHook",
    "CleanupReport",
    "cleanup_candidate_params",
    "cleanup_event_rows",
    "locked_transaction",
    "run_cleanup",
    "transaction_connection",
]

#: Called after each write step of a batch with the step name and the connection (tests).
CleanupHook = Callable[[str, oracledb.Connection], None]


def transaction_connection(tx: OracleTransaction) -> oracledb.Connection:
    """The connection of an open ``OracleTransaction``."""
    return tx.connection


@contextmanager
def locked_transaction(
    store: OracleStore, epoch: int | None
) -> Iterator[tuple[OracleTransaction, oracledb.Connection]]:
    """The core's locked transaction (``flightstate_core.engine.unit_of_work``, the one place
    PIPELINE_LOCK is taken, fenced by ``epoch``) and its connection."""
    with core_locked_transaction(store, epoch) as tx:
        yield tx, tx.connection


# --------------------------------------------------------------------------- candidates


@frozen
class _Walk:
    """Where the walk stands: dated flights by (day, FLID), then undated by FLID.
    ``day``/``flid`` None: from the start (``''`` cannot be bound: it is NULL)."""

    dated: bool = True
    day: date | None = None
    flid: str | None = None


def cleanup_candidate_params(
    walk_day: date | None, walk_flid: str | None, *, now: datetime, policy: RetentionPolicy,
    config: CoreConfig, size: int,
) -> dict[str, object]:  # fmt: skip
    """Binds of ``sql.CLEANUP_DATED`` (pure)."""
    statuses = sorted(policy.terminal_statuses)
    if len(statuses) > sql.IN_LIST_SIZE:
        raise PermanentError(f"at most {sql.IN_LIST_SIZE} terminal statuses")
    today = now.astimezone(config.airport_tz).date()
    return {
        "UNTIL_DAY": today - timedelta(days=policy.retention.days + 1),
        "AFTER_DAY": walk_day, "AFTER_FLID": walk_flid,
        "QUIET_BEFORE": to_utc_naive(now - policy.quiet_period), "MAX_ROWS": size,
        **in_params(statuses, "S"),
    }  # fmt: skip


def _candidates(tx: OracleTransaction, walk: _Walk, size: int, *, now: datetime,
                policy: RetentionPolicy,
                config: CoreConfig) -> tuple[list[str], _Walk | None]:  # fmt: skip
    """The next candidates and the walk position after them (None: nothing left)."""
    with translated():
        return _candidates_on(tx.connection, walk, size, now=now, policy=policy, config=config)


def _candidates_on(conn: oracledb.Connection, walk: _Walk, size: int, *, now: datetime,
                   policy: RetentionPolicy,
                   config: CoreConfig) -> tuple[list[str], _Walk | None]:  # fmt: skip
    if walk.dated:
        params = cleanup_candidate_params(
            walk.day, walk.flid, now=now, policy=policy, config=config, size=size
        )
        rows = query(conn, sql.CLEANUP_DATED, params)
        if rows:
            last = rows[-1]
            day = last["OPERATION_DAY"]
            day = day.date() if isinstance(day, datetime) else day
            if not isinstance(day, date):
                raise PermanentError("FLIGHT_SCHD.OPERATION_DAY: expected a date")
            return [str(r["FLID"]) for r in rows], _Walk(True, day, str(last["FLID"]))
        walk = _Walk(dated=False)
    quiet = to_utc_naive(now - policy.null_day_quiet)
    rows = query(conn, sql.CLEANUP_UNDATED,
                 {"AFTER_FLID": walk.flid, "QUIET_BEFORE": quiet, "MAX_ROWS": size})  # fmt: skip
    if rows:
        return [str(r["FLID"]) for r in rows], _Walk(False, None, str(rows[-1]["FLID"]))
    return [], None


# --------------------------------------------------------------------------- writes


def _archive_and_delete(conn: oracledb.Connection, flids: list[str], now: datetime,
                        hook: CleanupHook) -> None:  # fmt: skip
    at = to_utc_naive(now)
    archived = {
        name: run_many(conn, sql.ARCHIVE[name], [{"FLID": f, "ARCHIVED_AT": at} for f in flids])
        for name in sql.ARCHIVE
    }
    check_archived(archived[MAIN_TABLE], flids)
    hook("history", conn)
    for name in sql.REMOVE:
        deleted = run_many(conn, sql.REMOVE[name], [{"FLID": f} for f in flids])
        check_removed(name, deleted, archived[name])
    hook("delete", conn)


def _event_rows(events: Sequence[OutboxEvent]) -> list[Row]:
    return [
        {"TOPIC": e.topic, "EVENT_KEY": e.key,
         "PAYLOAD": None if e.payload is None else e.payload.decode("utf-8"), "FLID": e.flid,
         "STATE_VERSION": e.state_version, "KIND": e.kind.value, "MESSAGE_ID": None,
         "EMPTY_CODES": None}
        for e in events
    ]  # fmt: skip


def cleanup_event_rows(plan: CleanupPlan, states: dict[str, FlightState]) -> list[Row]:
    """MSG_EVENT binds (``sql.EVENT_INSERT``) of the tombstones and notifications (pure)."""
    return _event_rows(cleanup_events(plan, states))


def _remove(tx: OracleTransaction, plan: CleanupPlan, events: Sequence[OutboxEvent], *,
            now: datetime, hook: CleanupHook) -> None:  # fmt: skip
    conn = tx.connection
    with translated():
        _archive_and_delete(conn, list(plan.remove), now, hook)
        run_many(conn, sql.EVENT_INSERT, _event_rows(events))
        hook("events", conn)


# --------------------------------------------------------------------------- entry point


def _no_hook(_step: str, _conn: oracledb.Connection) -> None:
    return None


def run_cleanup(
    store: OracleStore,
    policy: RetentionPolicy,
    config: CoreConfig,
    *,
    now: datetime,
    epoch: int | None = None,
    limit: int | None = None,
    fault_hook: CleanupHook | None = None,
) -> CleanupReport:
    """Archive and remove every flight the retention rules release, batch by batch.

    Same contract as ``flightstate_pg.lifecycle.run_cleanup``: ``limit`` caps the
    candidates examined (None: until none is left), ``epoch`` fences the run,
    ``fault_hook`` (tests) is called after each of ``CLEANUP_STEPS``. Raises the core error
    of a failed batch (earlier batches stay committed; the failed one changed nothing).
    """
    return run_cleanup_batches(
        store, policy, config, now=now, epoch=epoch, limit=limit, start=_Walk(),
        candidates=partial(_candidates, now=now, policy=policy, config=config),
        remove=partial(_remove, now=now, hook=fault_hook or _no_hook),
    )  # fmt: skip

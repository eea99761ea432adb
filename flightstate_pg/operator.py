"""Operator functions on PostgreSQL: republish the current state, show a flight's history.

Why ``republish`` takes PIPELINE_LOCK: its rows must land in MSG_EVENT after every event of
the states it read and before any later one. The dispatcher keeps only the latest row of a
run of snapshots of one FLID, so a republished older version committed after a newer
pump event would hide the newer one.

Decisions (the driver-free parts, payloads, batches and history entries, are in
``flightstate_core.engine.operations``, shared with Oracle):
- A republished row is a ``schd`` record with the current STATE_VERSION (unchanged: a
  republish is not a change) and KIND ``REPUBLISH``, MESSAGE_ID NULL, no ``msg``.
- A DELETED flight still in the current state is republished as a tombstone (null value):
  a downstream rebuilding from an empty topic loses nothing, and a topic that still holds
  a stale snapshot of that FLID converges. Flights removed by cleanup are gone (their
  tombstone was written then).
- ``flight_history`` reads MSG_EVENT, so its depth is the outbox purge horizon; packages in
  SCHD_SNAP_LOG that carried the flight but left no event are listed with ``changed`` None.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from datetime import datetime
from functools import partial
from typing import Any, Final

import psycopg

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.state import FlightState
from flightstate_core.engine.operations import (
    REPUBLISH_KIND,
    HistoryProc,
    flight_history_of,
    notice_about,
    republish_flights,
    republish_payload,
)
from flightstate_pg.lifecycle import transaction_connection
from flightstate_pg.store import PgStore
from flightstate_pg.transaction import PgTransaction

__all__ = ["REPUBLISH_KIND", "flight_history", "republish"]

Conn = psycopg.Connection[Any]

_PAGE: Final = "SELECT FLID FROM FLIGHT_SCHD WHERE FLID > %s ORDER BY FLID LIMIT %s"
_EVENT_INSERT: Final = (
    "INSERT INTO MSG_EVENT (TOPIC, EVENT_KEY, PAYLOAD, FLID, STATE_VERSION, KIND, MESSAGE_ID, "
    "CREATED_AT) VALUES ('schd', %s, %s, %s, %s, 'REPUBLISH', NULL, %s)"
)


def _page(store: PgStore, after: str | None, size: int) -> list[str]:
    """Current FLIDs after ``after`` in FLID order, from one short transaction."""
    with store.transaction() as tx:
        return [r[0] for r in transaction_connection(tx).execute(_PAGE, (after or "", size))]


def _write(tx: PgTransaction, states: list[FlightState], *, config: CoreConfig,
           now: datetime) -> None:  # fmt: skip
    rows = [(s.flid, republish_payload(s, config), s.flid, s.version, now) for s in states]
    with transaction_connection(tx).cursor() as cursor:
        cursor.executemany(_EVENT_INSERT, rows)


def republish(
    store: PgStore,
    config: CoreConfig,
    *,
    now: datetime,
    flids: Collection[str] | None = None,
    epoch: int | None = None,
    batch: int = 500,
) -> int:
    """Write a fresh ``schd`` record of the current state of ``flids`` (None: every flight);
    return how many. Unknown FLIDs are skipped. One locked transaction per batch."""
    return republish_flights(store, flids, batch=batch, epoch=epoch, page=partial(_page, store),
                             write=partial(_write, config=config, now=now))  # fmt: skip


# --------------------------------------------------------------------------- history

_OWN_EVENTS: Final = (
    "SELECT EVENT_ID, MESSAGE_ID, STATE_VERSION, KIND, CREATED_AT FROM MSG_EVENT "
    "WHERE FLID = %s AND TOPIC = 'schd' AND KIND IN ('SNAPSHOT', 'TOMBSTONE') ORDER BY EVENT_ID"
)
_NOTICES: Final = (
    "SELECT MESSAGE_ID, PAYLOAD FROM MSG_EVENT WHERE TOPIC = 'msg' AND "
    "(MESSAGE_ID = ANY(%b) OR (FLID = %s AND MESSAGE_ID IS NULL)) ORDER BY EVENT_ID"
)
_PROCS: Final = (
    "SELECT MESSAGE_ID, MSG_TYPE, MSG_STYP, STATUS, DTTM, PROCESSED_AT, REASON FROM PROC_STATE "
    "WHERE MESSAGE_ID = ANY(%b)"
)
_SNAPS: Final = (
    "SELECT MESSAGE_ID, STYP, CREATED_AT FROM SCHD_SNAP_LOG WHERE FLIDS::jsonb @> %s::jsonb "
    "ORDER BY MESSAGE_ID"
)


def _notices_for(conn: Conn, flid: str, message_ids: list[int]) -> dict[int | None, dict[str, Any]]:
    """The ``msg`` body about ``flid`` per message id (its own, or its master's with
    ``codeshare`` = flid); cleanup notifications under key None."""
    found: dict[int | None, dict[str, Any]] = {}
    for message_id, payload in conn.execute(_NOTICES, (message_ids, flid)).fetchall():
        body = json.loads(payload)
        if notice_about(body, flid):
            found[message_id] = body
    return found


def _procs(conn: Conn, message_ids: list[int]) -> dict[int, HistoryProc]:
    """PROC_STATE of these messages (MESSAGE_ID, MSG_TYPE, MSG_STYP, STATUS, DTTM,
    PROCESSED_AT, ...) as history columns, by message id."""
    rows = conn.execute(_PROCS, (message_ids,)).fetchall()
    return {r[0]: HistoryProc(r[1], r[2], r[3], r[4], r[5], r[6]) for r in rows}


def flight_history(store: PgStore, flid: str) -> list[dict[str, Any]]:
    """The messages that changed ``flid``, in order, each with the fields it changed.

    Keys: messageId, type, styp, status, dttm, processedAt, stateVersion, change
    (CREATED/UPDATED/DELETED), changed (wire keys; None if unknown), source (``event``,
    ``cleanup`` for a lifecycle removal, ``snap_log`` for a package with no event left).
    """
    with store.transaction() as tx:
        conn = transaction_connection(tx)
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        events = [(r[1], r[2], r[3], r[4]) for r in conn.execute(_OWN_EVENTS, (flid,))]
        snaps = [(r[0], r[1], r[2]) for r in conn.execute(_SNAPS, (json.dumps([flid]),))]
        return flight_history_of(events=events, notices=partial(_notices_for, conn, flid),
                                 procs=partial(_procs, conn), snaps=snaps)  # fmt: skip

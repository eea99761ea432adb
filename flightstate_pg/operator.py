"""Operator functions on PostgreSQL: republish the current state, show a flight's history.

Why ``republish`` takes PIPELINE_LOCK: its rows must land in MSG_EVENT after every event of
the states it read and before any later one. The dispatcher keeps only the latest row of a
run of snapshots of one FLID, so a republished older version committed after a newer
pump event would hide the newer one.

Decisions:
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
from collections.abc import Collection, Iterator, Sequence
from datetime import datetime
from typing import Any, Final

import psycopg

from flightstate_core.config import CoreConfig
from flightstate_core.state import FlightState
from flightstate_core.wire import wire
from flightstate_pg.lifecycle import locked_transaction, transaction_connection
from flightstate_pg.store import PgStore

__all__ = ["REPUBLISH_KIND", "flight_history", "republish"]

Conn = psycopg.Connection[Any]
REPUBLISH_KIND: Final = "REPUBLISH"

_PAGE: Final = "SELECT FLID FROM FLIGHT_SCHD WHERE FLID > %s ORDER BY FLID LIMIT %s"
_EVENT_INSERT: Final = (
    "INSERT INTO MSG_EVENT (TOPIC, EVENT_KEY, PAYLOAD, FLID, STATE_VERSION, KIND, MESSAGE_ID, "
    "CREATED_AT) VALUES ('schd', %s, %s, %s, %s, 'REPUBLISH', NULL, %s)"
)


def _republish_rows(
    states: Sequence[FlightState], config: CoreConfig, now: datetime
) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    for state in states:
        payload = None if state.is_deleted else wire(state, config).decode("utf-8")
        rows.append((state.flid, payload, state.flid, state.version, now))
    return rows


def _batches(store: PgStore, flids: Collection[str] | None, size: int) -> Iterator[list[str]]:
    """Batches of FLIDs: the given ones, or every current flight in FLID order."""
    if flids is not None:
        keys = sorted(set(flids))
        for start in range(0, len(keys), size):
            yield keys[start : start + size]
        return
    after = ""
    while True:
        with store.transaction() as tx:
            page = [r[0] for r in transaction_connection(tx).execute(_PAGE, (after, size))]
        if not page:
            return
        yield page
        after = page[-1]


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
    written = 0
    for keys in _batches(store, flids, batch):
        with locked_transaction(store, epoch) as (tx, conn):
            states = tx.load_flights(keys)
            rows = _republish_rows([states[k] for k in keys if k in states], config, now)
            if rows:
                with conn.cursor() as cursor:
                    cursor.executemany(_EVENT_INSERT, rows)
        written += len(rows)
    return written


# --------------------------------------------------------------------------- history

_OWN_EVENTS: Final = (
    "SELECT EVENT_ID, MESSAGE_ID, STATE_VERSION, KIND, CREATED_AT FROM MSG_EVENT "
    "WHERE FLID = %s AND TOPIC = 'schd' AND KIND IN ('SNAPSHOT', 'TOMBSTONE') ORDER BY EVENT_ID"
)
_NOTICES: Final = (
    "SELECT MESSAGE_ID, PAYLOAD FROM MSG_EVENT WHERE TOPIC = 'msg' AND "
    "(MESSAGE_ID = ANY(%s) OR (FLID = %s AND MESSAGE_ID IS NULL)) ORDER BY EVENT_ID"
)
_PROCS: Final = (
    "SELECT MESSAGE_ID, MSG_TYPE, MSG_STYP, STATUS, DTTM, PROCESSED_AT, REASON FROM PROC_STATE "
    "WHERE MESSAGE_ID = ANY(%s)"
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
        if body.get("codeshare") == flid or (body["flid"] == flid and "codeshare" not in body):
            found[message_id] = body
    return found


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _entry(
    event: Sequence[Any], body: dict[str, Any] | None, proc: Sequence[Any] | None
) -> dict[str, Any]:
    _event_id, message_id, version, kind, created = event
    change = "DELETED" if kind == "TOMBSTONE" else ("CREATED" if version == 1 else "UPDATED")
    return {
        "messageId": message_id,
        "type": proc[1] if proc else (body or {}).get("type"),
        "styp": proc[2] if proc else (body or {}).get("styp"),
        "status": proc[3] if proc else None,
        "dttm": _iso(proc[4]) if proc else None,
        "processedAt": _iso(proc[5]) if proc else _iso(created),
        "stateVersion": version,
        "change": change,
        "changed": body["changed"] if body is not None else None,
        "source": "event" if message_id is not None else "cleanup",
    }


def _snap_entries(conn: Conn, flid: str, seen: set[int]) -> list[dict[str, Any]]:
    rows = conn.execute(_SNAPS, (json.dumps([flid]),)).fetchall()
    missing = [row for row in rows if row[0] not in seen]
    procs = {r[0]: r for r in conn.execute(_PROCS, ([r[0] for r in missing],)).fetchall()}
    return [
        {"messageId": mid, "type": "SCHD", "styp": styp,
         "status": procs[mid][3] if mid in procs else None,
         "dttm": _iso(procs[mid][4]) if mid in procs else None,
         "processedAt": _iso(procs[mid][5]) if mid in procs else _iso(created),
         "stateVersion": None, "change": None, "changed": None, "source": "snap_log"}
        for mid, styp, created in missing
    ]  # fmt: skip


def flight_history(store: PgStore, flid: str) -> list[dict[str, Any]]:
    """The messages that changed ``flid``, in order, each with the fields it changed.

    Keys: messageId, type, styp, status, dttm, processedAt, stateVersion, change
    (CREATED/UPDATED/DELETED), changed (wire keys; None if unknown), source (``event``,
    ``cleanup`` for a lifecycle removal, ``snap_log`` for a package with no event left).
    """
    with store.transaction() as tx:
        conn = transaction_connection(tx)
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        events = conn.execute(_OWN_EVENTS, (flid,)).fetchall()
        message_ids = [e[1] for e in events if e[1] is not None]
        bodies = _notices_for(conn, flid, message_ids)
        procs = {r[0]: r for r in conn.execute(_PROCS, (message_ids,)).fetchall()}
        entries = [_entry(e, bodies.get(e[1]), procs.get(e[1])) for e in events]
        entries += _snap_entries(conn, flid, set(message_ids))
    return sorted(entries, key=_order)


def _order(entry: dict[str, Any]) -> tuple[int, int, int]:
    message_id = entry["messageId"]
    if message_id is None:
        return (1, 0, entry["stateVersion"] or 0)  # cleanup ends a life: after its messages
    return (0, message_id, entry["stateVersion"] or 0)

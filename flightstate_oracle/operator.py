"""Operator functions on Oracle 11g: republish the current state, show a flight's history.

Same entry points, signatures and decisions as ``flightstate_pg.operator`` (read its
docstring: republish takes PIPELINE_LOCK so its rows land after every event of the states it
read; a republished row is a ``schd`` record of the current version, KIND ``REPUBLISH``,
MESSAGE_ID NULL; a DELETED flight is republished as a tombstone). The payloads, the FLID
batches and the history entries are pure, in ``flightstate_core.engine.operations``. 11g
differences:

- ``flight_history`` reads in one ``SET TRANSACTION READ ONLY`` transaction (Oracle's
  transaction-level read consistency, PostgreSQL's REPEATABLE READ READ ONLY).
- Message-id look-ups use IN lists of 100 (chunked); the ``msg`` rows of all chunks are
  put back in EVENT_ID order, so a later body wins as in PostgreSQL.
- SCHD_SNAP_LOG.FLIDS is JSON text in a CLOB and 11g has no JSON operators:
  ``DBMS_LOB.INSTR`` finds candidate rows by the FLID's JSON string, and the decoded list
  is checked exactly (``snap_mentions``).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from datetime import datetime
from functools import partial
from typing import Any

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.state import FlightState
from flightstate_core.engine.operations import (
    REPUBLISH_KIND,
    EventRow,
    HistoryProc,
    SnapRow,
    flight_history_of,
    notice_about,
    republish_flights,
    republish_payload,
)
from flightstate_oracle import _sql as sql
from flightstate_oracle._db import query, run, run_many
from flightstate_oracle._errors import translated
from flightstate_oracle._load import chunked, in_params
from flightstate_oracle._presence import from_utc_naive, to_utc_naive
from flightstate_oracle._records import proc_from_row
from flightstate_oracle._rows import Row
from flightstate_oracle.store import OracleStore
from flightstate_oracle.transaction import OracleTransaction

__all__ = ["REPUBLISH_KIND", "flight_history", "republish", "republish_rows", "snap_mentions"]


def republish_rows(states: Sequence[FlightState], config: CoreConfig, now: datetime) -> list[Row]:
    """``sql.REPUBLISH_INSERT`` binds for these states (pure)."""
    return [
        {"EVENT_KEY": state.flid, "PAYLOAD": republish_payload(state, config), "FLID": state.flid,
         "STATE_VERSION": state.version, "CREATED_AT": to_utc_naive(now)}
        for state in states
    ]  # fmt: skip


def _page(store: OracleStore, after: str | None, size: int) -> list[str]:
    """Current FLIDs after ``after`` (None: from the first) in FLID order."""
    with store.transaction() as tx, translated():
        if after is None:
            rows = query(tx.connection, sql.PAGE_FIRST, {"MAX_ROWS": size})
        else:
            rows = query(tx.connection, sql.PAGE_NEXT, {"AFTER_FLID": after, "MAX_ROWS": size})
    return [str(row["FLID"]) for row in rows]


def _write(tx: OracleTransaction, states: list[FlightState], *, config: CoreConfig,
           now: datetime) -> None:  # fmt: skip
    with translated():
        run_many(tx.connection, sql.REPUBLISH_INSERT, republish_rows(states, config, now))


def republish(
    store: OracleStore,
    config: CoreConfig,
    *,
    now: datetime,
    flids: Collection[str] | None = None,
    epoch: int | None = None,
    batch: int = 500,
) -> int:
    """Write a fresh ``schd`` record of the current state of ``flids`` (None: every flight);
    return how many. Unknown FLIDs are skipped. One locked transaction per batch."""
    keys_given = None if flids is None else (flid for flid in flids if flid)  # "" is NULL
    return republish_flights(store, keys_given, batch=batch, epoch=epoch,
                             page=partial(_page, store),
                             write=partial(_write, config=config, now=now))  # fmt: skip


# --------------------------------------------------------------------------- history


def snap_mentions(flids_json: str | None, flid: str) -> bool:
    """Whether a SCHD_SNAP_LOG.FLIDS text lists ``flid`` exactly (pure)."""
    if not flids_json:
        return False
    listed = json.loads(flids_json)
    return isinstance(listed, list) and flid in listed


def _notices_for(conn: Any, flid: str, message_ids: list[int]) -> dict[int | None, dict[str, Any]]:
    """The ``msg`` body about ``flid`` per message id (its own, or its master's with
    ``codeshare`` = flid); cleanup notifications under key None."""
    rows = query(conn, sql.NOTICES_OF_CLEANUP, {"FLID": flid})
    for chunk in chunked(message_ids):
        rows += query(conn, sql.NOTICES_OF_MESSAGES, in_params(chunk, "M"))
    found: dict[int | None, dict[str, Any]] = {}
    for row in sorted(rows, key=lambda r: int(str(r["EVENT_ID"]))):
        body = json.loads(str(row["PAYLOAD"]))
        if notice_about(body, flid):
            message_id = row["MESSAGE_ID"]
            found[None if message_id is None else int(str(message_id))] = body
    return found


def _procs(conn: Any, message_ids: Collection[int]) -> dict[int, HistoryProc]:
    found: dict[int, HistoryProc] = {}
    for chunk in chunked(message_ids):
        for row in query(conn, sql.PROCS_OF_MESSAGES, in_params(chunk, "M")):
            record = proc_from_row(row)
            found[record.message_id] = HistoryProc.of(record)
    return found


def _message_id(value: object) -> int | None:
    return None if value is None else int(str(value))


def _version(value: Any) -> int:
    return int(value)


def _events(conn: Any, flid: str) -> list[EventRow]:
    return [
        (_message_id(e["MESSAGE_ID"]), _version(e["STATE_VERSION"]), str(e["KIND"]),
         from_utc_naive(e["CREATED_AT"]))
        for e in query(conn, sql.EVENTS_OF_FLIGHT, {"FLID": flid})
    ]  # fmt: skip


def _snaps(conn: Any, flid: str) -> list[SnapRow]:
    needle = json.dumps(flid, ensure_ascii=False)  # how snap_row writes each FLID
    return [
        (int(str(row["MESSAGE_ID"])), row["STYP"], from_utc_naive(row["CREATED_AT"]))
        for row in query(conn, sql.SNAPS_OF_FLIGHT, {"NEEDLE": needle})
        if snap_mentions(None if row["FLIDS"] is None else str(row["FLIDS"]), flid)
    ]  # fmt: skip


def flight_history(store: OracleStore, flid: str) -> list[dict[str, Any]]:
    """The messages that changed ``flid``, in order, each with the fields it changed
    (same keys and order as ``flightstate_pg.operator.flight_history``)."""
    with store.transaction() as tx, translated():
        conn = tx.connection
        run(conn, sql.READ_ONLY)  # one read-consistent snapshot for every query below
        return flight_history_of(
            events=_events(conn, flid), notices=partial(_notices_for, conn, flid),
            procs=partial(_procs, conn), snaps=_snaps(conn, flid),
        )  # fmt: skip

"""Operator functions on Oracle 11g: republish the current state, show a flight's history.

Same entry points, signatures and decisions as ``flightstate_pg.operator`` (read its
docstring: republish takes PIPELINE_LOCK so its rows land after every event of the states it
read; a republished row is a ``schd`` record of the current version, KIND ``REPUBLISH``,
MESSAGE_ID NULL; a DELETED flight is republished as a tombstone). 11g differences:

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
from collections.abc import Collection, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Final

from flightstate_core.config import CoreConfig
from flightstate_core.records import ProcRecord
from flightstate_core.state import FlightState
from flightstate_core.wire import wire
from flightstate_oracle import sql, sql_ops
from flightstate_oracle.db import query, run, run_many
from flightstate_oracle.errors import oracle_errors
from flightstate_oracle.lifecycle import locked_transaction
from flightstate_oracle.load import chunked, in_params
from flightstate_oracle.presence import from_utc_naive, to_utc_naive
from flightstate_oracle.records import proc_from_row
from flightstate_oracle.rows import Row
from flightstate_oracle.store import OracleStore

__all__ = ["REPUBLISH_KIND", "flight_history", "republish", "republish_rows", "snap_mentions"]

REPUBLISH_KIND: Final = "REPUBLISH"


def republish_rows(
    states: Sequence[FlightState], config: CoreConfig, now: datetime
) -> list[Row]:
    """``sql_ops.REPUBLISH_INSERT`` binds for these states (pure)."""
    rows: list[Row] = []
    for state in states:
        payload = None if state.is_deleted else wire(state, config).decode("utf-8")
        rows.append({"EVENT_KEY": state.flid, "PAYLOAD": payload, "FLID": state.flid,
                     "STATE_VERSION": state.version, "CREATED_AT": to_utc_naive(now)})  # fmt: skip
    return rows


def _batches(store: OracleStore, flids: Collection[str] | None, size: int) -> Iterator[list[str]]:
    """Batches of FLIDs: the given ones, or every current flight in FLID order."""
    if flids is not None:
        keys = sorted({flid for flid in flids if flid})  # "" is NULL: no such flight
        for start in range(0, len(keys), size):
            yield keys[start : start + size]
        return
    after: str | None = None
    while True:
        with store.transaction() as tx, oracle_errors():
            if after is None:
                rows = query(tx.connection, sql.PAGE_FIRST, {"MAX_ROWS": size})
            else:
                rows = query(tx.connection, sql.PAGE_NEXT, {"AFTER_FLID": after, "MAX_ROWS": size})
        page = [str(row["FLID"]) for row in rows]
        if not page:
            return
        yield page
        after = page[-1]


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
    written = 0
    for keys in _batches(store, flids, batch):
        with locked_transaction(store, epoch) as (tx, conn), oracle_errors():
            states = tx.load_flights(keys)
            rows = republish_rows([states[k] for k in keys if k in states], config, now)
            run_many(conn, sql_ops.REPUBLISH_INSERT, rows)
        written += len(rows)
    return written


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
    rows = query(conn, sql_ops.NOTICES_OF_CLEANUP, {"FLID": flid})
    for chunk in chunked(message_ids):
        rows += query(conn, sql_ops.NOTICES_OF_MESSAGES, in_params(chunk, "M"))
    found: dict[int | None, dict[str, Any]] = {}
    for row in sorted(rows, key=lambda r: int(str(r["EVENT_ID"]))):
        body = json.loads(str(row["PAYLOAD"]))
        if body.get("codeshare") == flid or (body["flid"] == flid and "codeshare" not in body):
            message_id = row["MESSAGE_ID"]
            found[None if message_id is None else int(str(message_id))] = body
    return found


def _procs(conn: Any, message_ids: Collection[int]) -> dict[int, ProcRecord]:
    found: dict[int, ProcRecord] = {}
    for chunk in chunked(message_ids):
        for row in query(conn, sql_ops.PROCS_OF_MESSAGES, in_params(chunk, "M")):
            record = proc_from_row(row)
            found[record.message_id] = record
    return found


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _entry(event: Mapping[str, Any], body: dict[str, Any] | None,
           proc: ProcRecord | None) -> dict[str, Any]:  # fmt: skip
    message_id, version, kind = event["MESSAGE_ID"], int(event["STATE_VERSION"]), event["KIND"]
    change = "DELETED" if kind == "TOMBSTONE" else ("CREATED" if version == 1 else "UPDATED")
    return {
        "messageId": None if message_id is None else int(message_id),
        "type": proc.type if proc else (body or {}).get("type"),
        "styp": proc.styp if proc else (body or {}).get("styp"),
        "status": proc.status.value if proc else None,
        "dttm": _iso(proc.dttm) if proc else None,
        "processedAt": _iso(proc.processed_at if proc else from_utc_naive(event["CREATED_AT"])),
        "stateVersion": version,
        "change": change,
        "changed": body["changed"] if body is not None else None,
        "source": "event" if message_id is not None else "cleanup",
    }


def _snap_entries(conn: Any, flid: str, seen: set[int]) -> list[dict[str, Any]]:
    needle = json.dumps(flid, ensure_ascii=False)  # how snap_row writes each FLID
    rows = [
        row for row in query(conn, sql_ops.SNAPS_OF_FLIGHT, {"NEEDLE": needle})
        if snap_mentions(None if row["FLIDS"] is None else str(row["FLIDS"]), flid)
        and int(str(row["MESSAGE_ID"])) not in seen
    ]  # fmt: skip
    procs = _procs(conn, [int(str(row["MESSAGE_ID"])) for row in rows])
    entries = []
    for row in rows:
        mid, proc = int(str(row["MESSAGE_ID"])), procs.get(int(str(row["MESSAGE_ID"])))
        entries.append({
            "messageId": mid, "type": "SCHD", "styp": row["STYP"],
            "status": proc.status.value if proc else None,
            "dttm": _iso(proc.dttm) if proc else None,
            "processedAt": _iso(proc.processed_at if proc else from_utc_naive(row["CREATED_AT"])),
            "stateVersion": None, "change": None, "changed": None, "source": "snap_log",
        })  # fmt: skip
    return entries


def flight_history(store: OracleStore, flid: str) -> list[dict[str, Any]]:
    """The messages that changed ``flid``, in order, each with the fields it changed
    (same keys and order as ``flightstate_pg.operator.flight_history``)."""
    with store.transaction() as tx, oracle_errors():
        conn = tx.connection
        run(conn, sql.READ_ONLY)  # one read-consistent snapshot for every query below
        events = query(conn, sql_ops.EVENTS_OF_FLIGHT, {"FLID": flid})
        message_ids = [int(str(e["MESSAGE_ID"])) for e in events if e["MESSAGE_ID"] is not None]
        bodies = _notices_for(conn, flid, message_ids)
        procs = _procs(conn, message_ids)
        entries = []
        for event in events:
            mid = None if event["MESSAGE_ID"] is None else int(str(event["MESSAGE_ID"]))
            proc = procs.get(mid) if mid is not None else None
            entries.append(_entry(event, bodies.get(mid), proc))
        entries += _snap_entries(conn, flid, set(message_ids))
    return sorted(entries, key=_order)


def _order(entry: dict[str, Any]) -> tuple[int, int, int]:
    message_id = entry["messageId"]
    if message_id is None:
        return (1, 0, entry["stateVersion"] or 0)  # cleanup ends a life: after its messages
    return (0, message_id, entry["stateVersion"] or 0)

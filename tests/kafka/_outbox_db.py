"""MSG_EVENT for the Kafka tests: the PG migrations, or the same table if they are absent.

Also writes realistic outbox rows (a per-FLID model of versions, deletions, revivals)
and derives the expected final downstream state from the table itself.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

# Same columns as docs/design.md "Tables"; used only if the migrations lack MSG_EVENT.
FALLBACK_DDL = """
CREATE TABLE IF NOT EXISTS msg_event (
    event_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    topic text NOT NULL, event_key text NOT NULL, payload text, flid text NOT NULL,
    state_version bigint NOT NULL, kind text NOT NULL, message_id bigint,
    created_at timestamptz NOT NULL DEFAULT now(), dispatched_at timestamptz);
CREATE INDEX IF NOT EXISTS msg_event_undispatched_ix ON msg_event (event_id)
    WHERE dispatched_at IS NULL;
"""

_INSERT = (
    "INSERT INTO msg_event (topic, event_key, payload, flid, state_version, kind, message_id)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s)"
)


def create_outbox_schema(dsn: str) -> None:
    """Apply the PG migrations (``flightstate_pg.migrate``); fall back to MSG_EVENT alone."""
    try:
        from flightstate_pg.migrate import migrate  # noqa: PLC0415 - optional until it lands
    except ImportError:
        migrate = None
    if migrate is not None:
        migrate(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(FALLBACK_DDL)  # IF NOT EXISTS: a no-op after the migrations


def wire_payload(flid: str, version: int, at: datetime, message_id: int) -> str:
    """A compact wire-ish ``schd`` value (a subset of the real wire format's keys)."""
    gate = f"G{random.randint(1, 60)}"
    return json.dumps({
        "flid": flid, "state": "ACTIVE", "stateVersion": version,
        "updatedAt": at.isoformat(), "operationDay": "2026-11-30",
        "lastMessageId": message_id, "FFID": f"CA-{flid}-A", "FLNO": flid[-4:],
        "SODT": "30NOV260535", "SODT_TS": "2026-11-30T05:35:00+08:00",
        "FDIV": None, "FRET": None,
        "GTDT": [{"ordinal": 1, "seq": "1", "GATE": gate, "PGOT": None, "PGOT_TS": None}],
        "REMARK": "航班 正常" if version % 2 else "delayed",
    }, separators=(",", ":"), ensure_ascii=False)


class EventModel:
    """Per-FLID model of what the pump would write: versions, deletions, revivals."""

    def __init__(self, flids: int, seed: int = 7, prefix: str = "F") -> None:
        self.rng = random.Random(seed)
        self.flids = [f"{prefix}{n:05d}" for n in range(flids)]
        self.version: dict[str, int] = {}
        self.alive: dict[str, bool] = {}
        self.message_id = 1000
        self.clock = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)

    def next_rows(self, count: int) -> list[tuple[Any, ...]]:
        """*count* changes as MSG_EVENT rows (a ``schd`` row plus a ``msg`` row each)."""
        rows: list[tuple[Any, ...]] = []
        for _ in range(count):
            flid = self.rng.choice(self.flids)
            self.message_id += 1
            self.clock += timedelta(seconds=1)
            version = self.version.get(flid, 0) + 1
            self.version[flid] = version
            delete = self.alive.get(flid, False) and self.rng.random() < 0.12
            self.alive[flid] = not delete
            rows.extend(self._rows(flid, version, delete))
        return rows

    def _rows(self, flid: str, version: int, delete: bool) -> list[tuple[Any, ...]]:
        change = "DELETED" if delete else ("CREATED" if version == 1 else "UPDATED")
        note = json.dumps({"flid": flid, "stateVersion": version, "change": change,
                           "changed": [], "messageId": self.message_id, "type": "FLOP",
                           "styp": "GTDT"})
        payload = None if delete else wire_payload(flid, version, self.clock, self.message_id)
        kind = "TOMBSTONE" if delete else "SNAPSHOT"
        return [("schd", flid, payload, flid, version, kind, self.message_id),
                ("msg", flid, note, flid, version, "NOTIFY", self.message_id)]


def insert_rows(dsn: str, rows: Iterable[tuple[Any, ...]]) -> None:
    """Insert outbox rows in one transaction (as one pump commit would)."""
    with psycopg.connect(dsn) as conn, conn.cursor() as cur:
        cur.executemany(_INSERT, list(rows))


def expected_projection(dsn: str) -> dict[str, Mapping[str, Any]]:
    """Latest ``schd`` row per FLID from MSG_EVENT: its state, or absent when deleted."""
    query = ("SELECT DISTINCT ON (flid) flid, payload FROM msg_event WHERE topic = 'schd'"
             " ORDER BY flid, state_version DESC, event_id DESC")
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(query).fetchall()
    return {flid: json.loads(payload) for flid, payload in rows if payload is not None}


def undelivered(dsn: str) -> int:
    """Rows not yet marked dispatched."""
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT count(*) FROM msg_event WHERE dispatched_at IS NULL")
        return int(row.fetchone()[0])  # type: ignore[index]

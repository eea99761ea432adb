"""MSG_EVENT for the Kafka tests: the PG migrations, the dispatch watermark.

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

from flightstate_pg.migrate import migrate

_INSERT = (
    "INSERT INTO msg_event (topic, event_key, payload, flid, state_version, kind, message_id)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s)"
)


def create_outbox_schema(dsn: str) -> None:
    """Apply the PG migrations (MSG_EVENT, OUTBOX_WATERMARK, ...)."""
    migrate(dsn)


def wire_payload(flid: str, version: int, at: datetime, message_id: int) -> str:
    """A compact wire-ish ``schd`` value (a subset of the real wire format's keys)."""
    gate = f"G{random.randint(1, 60)}"
    return json.dumps(
        {
            "flid": flid,
            "state": "ACTIVE",
            "stateVersion": version,
            "updatedAt": at.isoformat(),
            "operationDay": "2026-11-30",
            "lastMessageId": message_id,
            "FFID": f"CA-{flid}-A",
            "FLNO": flid[-4:],
            "SODT": "30NOV260535",
            "SODT_TS": "2026-11-30T05:35:00+08:00",
            "FDIV": None,
            "FRET": None,
            "GTDT": [{"ordinal": 1, "seq": "1", "GATE": gate, "PGOT": None, "PGOT_TS": None}],
            "REMARK": "航班 正常" if version % 2 else "delayed",
        },
        separators=(",", ":"),
        ensure_ascii=False,
    )


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
        note = json.dumps(
            {
                "flid": flid,
                "stateVersion": version,
                "change": change,
                "changed": [],
                "messageId": self.message_id,
                "type": "FLOP",
                "styp": "GTDT",
            }
        )
        payload = None if delete else wire_payload(flid, version, self.clock, self.message_id)
        kind = "TOMBSTONE" if delete else "SNAPSHOT"
        return [
            ("schd", flid, payload, flid, version, kind, self.message_id),
            ("msg", flid, note, flid, version, "NOTIFY", self.message_id),
        ]


def insert_rows(dsn: str, rows: Iterable[tuple[Any, ...]]) -> None:
    """Insert outbox rows in one transaction (as one pump commit would)."""
    with psycopg.connect(dsn) as conn, conn.cursor() as cur:
        cur.executemany(_INSERT, list(rows))


def expected_projection(dsn: str) -> dict[str, Mapping[str, Any]]:
    """Latest ``schd`` row per FLID from MSG_EVENT: its state, or absent when deleted."""
    query = (
        "SELECT DISTINCT ON (flid) flid, payload FROM msg_event WHERE topic = 'schd'"
        " ORDER BY flid, state_version DESC, event_id DESC"
    )
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(query).fetchall()
    return {flid: json.loads(payload) for flid, payload in rows if payload is not None}


def watermark(dsn: str) -> int:
    """The dispatcher's watermark: every row with an id at or below it was delivered."""
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT last_event_id FROM outbox_watermark WHERE outbox_name = 'kafka'"
        ).fetchone()
    assert row is not None, "OUTBOX_WATERMARK row missing"
    return int(row[0])


def set_watermark(dsn: str, event_id: int) -> None:
    """Move the watermark (also backwards: what a lost UPDATE would leave behind)."""
    with psycopg.connect(dsn) as conn:
        conn.execute(
            "UPDATE outbox_watermark SET last_event_id = %s WHERE outbox_name = 'kafka'",
            (event_id,),
        )


def undelivered(dsn: str) -> int:
    """Rows above the watermark (not yet delivered), counted straight from the tables."""
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT count(*) FROM msg_event WHERE event_id > "
            "(SELECT last_event_id FROM outbox_watermark WHERE outbox_name = 'kafka')"
        ).fetchone()
        return int(row[0])  # type: ignore[index]

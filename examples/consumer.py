"""A downstream service that keeps a table of current flights from the ``schd`` topic.

It embeds ``flightstate_kafka.ProjectionConsumer`` with a SQLite-backed ``Projection``:
one row per FLID with its STATE_VERSION, updatedAt, a deleted flag (the "grave" that
stops a stale snapshot from reviving a deleted flight) and the wire JSON. Offsets are
committed after the rows are written, so a crash replays records; the version check
makes the replay harmless.

    python examples/consumer.py --bootstrap 127.0.0.1:9092 --topic schd --db flights.db
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sqlite3
import threading
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from flightstate_kafka import ProjectionConsumer, Seen

_SCHEMA = """
CREATE TABLE IF NOT EXISTS flight (
    flid TEXT PRIMARY KEY,
    state_version INTEGER NOT NULL,
    updated_at TEXT,
    deleted INTEGER NOT NULL,
    state_json TEXT
)"""


class SqliteProjection:
    """A ``flightstate_kafka.Projection`` on a SQLite table (autocommit per record)."""

    def __init__(self, path: str) -> None:
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute(_SCHEMA)

    def current(self, flid: str) -> Seen | None:
        """What was last applied for *flid*."""
        row = self.db.execute(
            "SELECT state_version, updated_at, deleted FROM flight WHERE flid = ?", (flid,)
        ).fetchone()
        if row is None:
            return None
        version, updated, deleted = row
        return Seen(version, datetime.fromisoformat(updated) if updated else None, bool(deleted))

    def put(self, flid: str, seen: Seen, state: Mapping[str, Any]) -> None:
        """Upsert the flight's state."""
        self._write(flid, seen, json.dumps(state, ensure_ascii=False))

    def remove(self, flid: str, seen: Seen) -> None:
        """Drop the state, keep the grave (version of the deletion)."""
        self._write(flid, seen, None)

    def _write(self, flid: str, seen: Seen, state_json: str | None) -> None:
        updated = seen.updated_at.isoformat() if seen.updated_at else None
        self.db.execute(
            "INSERT INTO flight (flid, state_version, updated_at, deleted, state_json)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (flid) DO UPDATE SET"
            " state_version = excluded.state_version, updated_at = excluded.updated_at,"
            " deleted = excluded.deleted, state_json = excluded.state_json",
            (flid, seen.state_version, updated, int(seen.deleted), state_json),
        )

    def live_flights(self) -> int:
        """How many flights are currently present."""
        return int(self.db.execute("SELECT count(*) FROM flight WHERE deleted = 0").fetchone()[0])


def main() -> None:
    """Consume until SIGINT/SIGTERM."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default="127.0.0.1:9092")
    parser.add_argument("--topic", default="schd")
    parser.add_argument("--group", default="flights-downstream")
    parser.add_argument("--db", default="flights.db")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)
    projection = SqliteProjection(args.db)
    consumer = ProjectionConsumer(
        {"bootstrap.servers": args.bootstrap, "group.id": args.group},
        args.topic,
        projection,
        on_applied=lambda r: logging.info(
            "%s v%d %s", r.flid, r.seen.state_version, "deleted" if r.state is None else "updated"
        ),
    )
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    consumer.run(stop)
    logging.info("stopped: %d live flights", projection.live_flights())


if __name__ == "__main__":
    main()

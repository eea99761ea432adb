"""Lifecycle cleanup on real PostgreSQL: archive first, remove, tombstone; groups; faults."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import jsonschema
import psycopg
import pytest
from psycopg import pq

import flightstate_core
from flightstate_core.domain.errors import LeadershipLost, PermanentError
from flightstate_core.engine.lifecycle import RetentionPolicy
from flightstate_pg import PgStore
from flightstate_pg.lifecycle import run_cleanup
from flightstate_testing.models import as_text, flop, fltr, record, schedule
from flightstate_testing.postgres import orphan_detail_rows
from tests.lifecycle.helpers import CONFIG, NOW, SENT, apply, count, rows

POLICY = RetentionPolicy(
    retention=timedelta(days=3), quiet_period=timedelta(days=2), null_day_quiet=timedelta(days=14)
)
OLD = NOW - timedelta(days=9)  # when the old flights were last written
MSG_SCHEMA = json.loads(
    (Path(flightstate_core.__file__).parent / "schemas" / "msg.schema.json").read_text()
)


class Boom(Exception):
    """Injected by a test hook."""


def _seed(store: PgStore) -> None:
    """A1 ended (ACTT), A2 busy, A3 recent day, A4 deleted, N1 undated and quiet, N2 undated."""
    apply(
        store,
        1,
        as_text(
            schedule(
                "DNLD",
                fltr(
                    "A1", gates=("G1", "G2"), SODT="20NOV260535", ACTT="20NOV260540", REMC="登机口"
                ),
                fltr("A2", SODT="20NOV260635"),
                fltr("A3", SODT="29NOV260735", ACTT="29NOV260740"),
                fltr("A4", gates=("G9",), SODT="20NOV260835"),
                seqn="1",
                recs="count",
                dttm=SENT,
            )
        ),
        now=OLD,
    )
    apply(store, 2, as_text(flop("FDEL", record("A4", delete=True), seqn="2", dttm=SENT)), now=OLD)
    apply(
        store,
        3,
        as_text(schedule("ADD", fltr("N1", FFID="N-1"), seqn="3", recs="count", dttm=SENT)),
        now=NOW - timedelta(days=20),
    )
    apply(
        store,
        4,
        as_text(schedule("ADD", fltr("N2", FFID="N-2"), seqn="4", recs="count", dttm=SENT)),
        now=NOW - timedelta(days=5),
    )
    apply(
        store,
        5,
        as_text(flop("FTSS", fltr("A2", FTSS="BRD"), seqn="5", dttm=SENT)),
        now=NOW - timedelta(hours=1),
    )


def _current(dsn: str, table: str, flid: str) -> list[tuple[Any, ...]]:
    return rows(dsn, f"SELECT * FROM {table} WHERE FLID = %s ORDER BY 1, 2", flid)


def _history(dsn: str, table: str, flid: str) -> list[tuple[Any, ...]]:
    found = rows(dsn, f"SELECT * FROM {table}_HIST WHERE FLID = %s ORDER BY 1, 2", flid)
    names = [name for (name,) in rows(
        dsn, "SELECT column_name FROM information_schema.columns WHERE table_name = %s "
        "ORDER BY ordinal_position", f"{table}_hist".lower(),
    )]  # fmt: skip
    at = names.index("archived_at")  # last but for columns added later (PROVENANCE, 0009)
    return [row[:at] + row[at + 1 :] for row in found]  # without ARCHIVED_AT


def test_cleanup_archives_removes_and_tombstones(pg_db: str, store: PgStore) -> None:
    _seed(store)
    before = {f: (_current(pg_db, "FLIGHT_SCHD", f), _current(pg_db, "FLIGHT_GATE", f))
              for f in ("A1", "A4", "N1")}  # fmt: skip
    events_before = count(pg_db, "MSG_EVENT")

    report = run_cleanup(store, POLICY, CONFIG, now=NOW)

    assert sorted(report.removed_flids) == ["A1", "A4", "N1"]
    # A4 was already DELETED (no tombstone); A2/N2 are not even candidates (SQL pre-selection)
    assert (report.removed, report.tombstoned, report.kept) == (3, 2, 0)
    assert sorted(store.get_flights(["A1", "A2", "A3", "A4", "N1", "N2"])) == ["A2", "A3", "N2"]
    for flid, (main, gates) in before.items():
        assert _history(pg_db, "FLIGHT_SCHD", flid) == main  # every column, typed twins too
        assert _history(pg_db, "FLIGHT_GATE", flid) == gates
        assert _current(pg_db, "FLIGHT_GATE", flid) == []
    assert len(before["A1"][1]) == 2
    assert before["A1"][0][0][0] == "A1"
    new = rows(
        pg_db,
        "SELECT TOPIC, EVENT_KEY, PAYLOAD, STATE_VERSION, KIND, MESSAGE_ID "
        "FROM MSG_EVENT WHERE EVENT_ID > %s ORDER BY EVENT_ID",
        events_before,
    )
    assert [(t, k, v, kind) for t, k, _, v, kind, _ in new] == [
        ("schd", "A1", 2, "TOMBSTONE"), ("msg", "A1", 2, "NOTIFY"),
        ("schd", "N1", 2, "TOMBSTONE"), ("msg", "N1", 2, "NOTIFY"),
    ]  # fmt: skip
    assert all(row[5] is None for row in new)
    assert new[0][2] is None
    body = json.loads(new[1][2])
    jsonschema.validate(body, MSG_SCHEMA)
    assert body == {"flid": "A1", "stateVersion": 2, "change": "DELETED", "changed": ["state"],
                    "messageId": None, "type": "LIFECYCLE", "styp": "CLEANUP"}  # fmt: skip

    assert orphan_detail_rows(pg_db) == {}
    again = run_cleanup(store, POLICY, CONFIG, now=NOW)
    assert (again.removed, again.tombstoned) == (0, 0)


def test_master_and_codeshares_leave_together(pg_db: str, store: PgStore) -> None:
    apply(
        store,
        1,
        as_text(
            schedule(
                "DNLD",
                fltr("M", SODT="20NOV260535", ACTT="20NOV260540"),
                fltr("C", SODT="20NOV260535", MAID="M"),
                seqn="1",
                recs="count",
                dttm=SENT,
            )
        ),
        now=OLD,
    )
    apply(
        store,
        2,
        as_text(flop("FTSS", fltr("C", FTSS="BRD"), seqn="2", dttm=SENT)),
        now=NOW - timedelta(hours=1),
    )
    small = RetentionPolicy(retention=POLICY.retention, quiet_period=POLICY.quiet_period,
                            batch_limit=1)  # fmt: skip

    kept = run_cleanup(store, small, CONFIG, now=NOW)
    assert kept.removed == 0
    assert sorted(store.get_flights(["M", "C"])) == ["C", "M"]

    apply(
        store,
        3,
        as_text(flop("ACTT", fltr("C", ACTT="20NOV260541"), seqn="3", dttm=SENT)),
        now=NOW - timedelta(minutes=30),
    )
    report = run_cleanup(store, small, CONFIG, now=NOW)
    assert sorted(report.removed_flids) == ["C", "M"]
    assert store.get_flights(["M", "C"]) == {}
    assert count(pg_db, "FLIGHT_SCHD_HIST", "FLID IN ('M', 'C')") == 2


def test_history_failure_deletes_zero_rows(pg_db: str, store: PgStore) -> None:
    _seed(store)
    snapshot = rows(pg_db, "SELECT FLID, STATE_VERSION FROM FLIGHT_SCHD ORDER BY FLID")
    events = count(pg_db, "MSG_EVENT")

    def hook(step: str, conn: psycopg.Connection[Any]) -> None:
        if step == "history":
            assert conn.info.transaction_status is pq.TransactionStatus.INTRANS
            archived = conn.execute("SELECT count(*) FROM FLIGHT_SCHD_HIST").fetchone()
            assert archived == (2,)  # A1 and A4 (N1 is in the undated batch)
            raise Boom("after history insert")

    with pytest.raises(Boom):
        run_cleanup(store, POLICY, CONFIG, now=NOW, fault_hook=hook)
    assert rows(pg_db, "SELECT FLID, STATE_VERSION FROM FLIGHT_SCHD ORDER BY FLID") == snapshot
    assert count(pg_db, "FLIGHT_GATE", "FLID IN ('A1', 'A4')") == 3
    assert count(pg_db, "FLIGHT_SCHD_HIST") == 0
    assert count(pg_db, "MSG_EVENT") == events


def test_history_constraint_failure_deletes_zero_rows(pg_db: str, store: PgStore) -> None:
    _seed(store)
    with psycopg.connect(pg_db, autocommit=True) as conn:  # the history store refuses A1's gate
        conn.execute("ALTER TABLE FLIGHT_GATE_HIST ADD CONSTRAINT NO_G2 CHECK (GATE <> 'G2')")
    snapshot = rows(pg_db, "SELECT * FROM FLIGHT_SCHD ORDER BY FLID")
    events = count(pg_db, "MSG_EVENT")

    with pytest.raises(PermanentError, match="no_g2"):
        run_cleanup(store, POLICY, CONFIG, now=NOW)
    assert rows(pg_db, "SELECT * FROM FLIGHT_SCHD ORDER BY FLID") == snapshot
    assert count(pg_db, "FLIGHT_GATE", "FLID = 'A1'") == 2
    assert count(pg_db, "FLIGHT_SCHD_HIST") == 0
    assert count(pg_db, "MSG_EVENT") == events


def test_batches_and_limit(pg_db: str, store: PgStore) -> None:
    ended = [fltr(f"E{n}", SODT="20NOV260535", ACTT="20NOV260540") for n in range(7)]
    # Codeshares that ended, of a master that has not: candidates the group rule keeps.
    waiting = [fltr(f"B{n}", SODT="19NOV260535", ACTT="19NOV260540", MAID="BM") for n in range(4)]
    apply(
        store,
        1,
        as_text(
            schedule(
                "DNLD",
                *ended,
                *waiting,
                fltr("BM", SODT="19NOV260535"),
                seqn="1",
                recs="count",
                dttm=SENT,
            )
        ),
        now=OLD,
    )
    apply(
        store,
        2,
        as_text(flop("FTSS", fltr("BM", FTSS="BRD"), seqn="2", dttm=SENT)),
        now=NOW - timedelta(hours=2),
    )
    policy = RetentionPolicy(retention=POLICY.retention, quiet_period=POLICY.quiet_period,
                             batch_limit=3)  # fmt: skip

    first = run_cleanup(store, policy, CONFIG, now=NOW, limit=7)  # B0-B3, E0-E2 examined
    assert (first.removed, first.kept, first.batches) == (3, 4, 3)
    assert sorted(first.removed_flids) == ["E0", "E1", "E2"]
    rest = run_cleanup(store, policy, CONFIG, now=NOW)  # B0-B3, E3-E6: 3 + 3 + 2
    assert (rest.removed, rest.kept, rest.batches) == (4, 4, 3)
    assert count(pg_db, "FLIGHT_SCHD") == 5
    assert count(pg_db, "FLIGHT_SCHD_HIST") == 7


def test_stale_epoch_removes_nothing(pg_db: str, store: PgStore) -> None:
    _seed(store)
    with psycopg.connect(pg_db, autocommit=True) as conn:
        conn.execute("UPDATE PIPELINE_LOCK SET EPOCH = 5")
    with pytest.raises(LeadershipLost):
        run_cleanup(store, POLICY, CONFIG, now=NOW, epoch=4)
    assert count(pg_db, "FLIGHT_SCHD") == 6
    assert count(pg_db, "FLIGHT_SCHD_HIST") == 0
    assert run_cleanup(store, POLICY, CONFIG, now=NOW, epoch=5).removed == 3

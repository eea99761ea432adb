"""Operator functions on real PostgreSQL: republish the current state; a flight's history."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import jsonschema
import psycopg
import pytest

import flightstate_core
from flightstate_core.domain.errors import LeadershipLost
from flightstate_core.domain.wire import wire
from flightstate_core.engine.lifecycle import RetentionPolicy
from flightstate_pg import PgStore
from flightstate_pg.lifecycle import run_cleanup
from flightstate_pg.operator import flight_history, republish
from flightstate_testing.models import as_text, flop, fltr, record, schedule
from tests.lifecycle.helpers import CONFIG, NOW, SENT, apply, count, rows

SCHD_SCHEMA = json.loads(
    (Path(flightstate_core.__file__).parent / "schemas" / "schd.schema.json").read_text()
)


def _seed(store: PgStore) -> None:
    apply(
        store,
        1,
        as_text(
            schedule(
                "DNLD",
                fltr("A", gates=("G1",), SODT="20NOV260535", REMC="延误"),
                fltr("D", SODT="20NOV260635"),
                seqn="1",
                recs="count",
                dttm=SENT,
            )
        ),
    )
    apply(store, 2, as_text(flop("ACTT", fltr("A", ACTT="20NOV260540"), seqn="2", dttm=SENT)))
    apply(store, 3, as_text(flop("FDEL", record("D", delete=True), seqn="3", dttm=SENT)))


def test_republish_writes_the_current_state(pg_db: str, store: PgStore) -> None:
    _seed(store)
    last_snapshot = rows(pg_db, "SELECT PAYLOAD FROM MSG_EVENT WHERE FLID = 'A' AND TOPIC = 'schd' "
                                "ORDER BY EVENT_ID DESC LIMIT 1")[0][0]  # fmt: skip
    before = count(pg_db, "MSG_EVENT")

    assert republish(store, CONFIG, now=NOW) == 2

    new = rows(pg_db, "SELECT TOPIC, EVENT_KEY, PAYLOAD, STATE_VERSION, KIND, MESSAGE_ID "
                      "FROM MSG_EVENT WHERE EVENT_ID > %s ORDER BY EVENT_ID", before)  # fmt: skip
    assert [(t, k, v, kind, m) for t, k, _, v, kind, m in new] == [
        ("schd", "A", 2, "REPUBLISH", None), ("schd", "D", 2, "REPUBLISH", None),
    ]  # fmt: skip
    payload = new[0][2]
    assert payload == last_snapshot  # the same bytes the pump wrote for this version
    assert payload.encode() == wire(store.get_flights(["A"])["A"], CONFIG)
    jsonschema.validate(json.loads(payload), SCHD_SCHEMA)
    assert new[1][2] is None  # a DELETED flight is republished as a tombstone

    assert republish(store, CONFIG, now=NOW, flids=["A", "nobody"]) == 1
    assert count(pg_db, "MSG_EVENT", "KIND = 'REPUBLISH'") == 3


def test_republish_is_fenced(pg_db: str, store: PgStore) -> None:
    _seed(store)
    with psycopg.connect(pg_db, autocommit=True) as conn:
        conn.execute("UPDATE PIPELINE_LOCK SET EPOCH = 2")
    with pytest.raises(LeadershipLost):
        republish(store, CONFIG, now=NOW, epoch=1)
    assert count(pg_db, "MSG_EVENT", "KIND = 'REPUBLISH'") == 0


def test_flight_history_lists_changes_in_order(store: PgStore) -> None:
    _seed(store)
    apply(
        store,
        4,
        as_text(
            schedule(
                "DNLD",
                fltr("A", gates=("G1",), SODT="20NOV260535", REMC="延误", ACTT="20NOV260540"),
                seqn="4",
                recs="count",
                dttm=SENT,
            )
        ),
    )  # same content: no change
    apply(
        store,
        5,
        as_text(
            schedule(
                "ADD", fltr("C", SODT="20NOV260535", MAID="A"), seqn="5", recs="count", dttm=SENT
            )
        ),
    )
    apply(
        store, 6, as_text(flop("FTSS", fltr("C", FTSS="BRD"), seqn="6", dttm=SENT))
    )  # notifies the master, names C

    history = flight_history(store, "A")
    assert [(h["messageId"], h["change"], h["source"]) for h in history] == [
        (1, "CREATED", "event"), (2, "UPDATED", "event"), (4, None, "snap_log"),
        (5, "UPDATED", "event"),  # C joined: A's MAFL changed
    ]  # fmt: skip
    assert history[0]["type"] == "SCHD"
    assert history[0]["styp"] == "DNLD"
    assert {"SODT", "REMC", "GTDT", "state", "operationDay"} <= set(history[0]["changed"])
    assert history[1]["changed"] == ["ACTT"]
    assert history[1]["styp"] == "ACTT"
    assert history[2]["changed"] is None
    assert history[2]["status"] == "SUCCEEDED"
    assert history[3]["changed"] == ["MAFL"]
    assert history[3]["stateVersion"] == 3

    codeshare = flight_history(store, "C")
    assert [(h["messageId"], h["change"], h["changed"]) for h in codeshare] == [
        (5, "CREATED", codeshare[0]["changed"]),
        (6, "UPDATED", ["FTSS"]),
    ]
    assert "MAID" in codeshare[0]["changed"]
    assert flight_history(store, "nobody") == []


def test_flight_history_ends_with_cleanup(store: PgStore) -> None:
    _seed(store)
    removed = run_cleanup(store, RetentionPolicy(), CONFIG, now=NOW + timedelta(days=30))
    assert "A" in removed.removed_flids
    history = flight_history(store, "A")
    assert [(h["messageId"], h["change"], h["source"]) for h in history] == [
        (1, "CREATED", "event"), (2, "UPDATED", "event"), (None, "DELETED", "cleanup"),
    ]  # fmt: skip
    assert history[-1]["changed"] == ["state"]
    assert history[-1]["type"] == "LIFECYCLE"
    assert history[-1]["stateVersion"] == 3

"""A FLID that comes back after lifecycle cleanup continues above its old versions.

Cleanup archived the flight and published a tombstone at version + 1; downstream
consumers keep that version as a marker. A re-created flight at version 1 would be
ignored by them forever, so the new flight starts above the archived versions.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from flightstate_core.domain.records import InboxRow
from flightstate_core.engine import service
from flightstate_core.engine.lifecycle import RetentionPolicy
from flightstate_pg import PgStore
from flightstate_pg.lifecycle import run_cleanup
from flightstate_testing.models import as_text, flop, fltr, schedule
from tests.lifecycle.helpers import CONFIG, NOW, SENT, apply, rows

pytestmark = pytest.mark.pg

POLICY = RetentionPolicy(retention=timedelta(days=3), quiet_period=timedelta(days=2))
OLD = NOW - timedelta(days=9)


def _archive_a_flight(store: PgStore, pg_db: str) -> int:
    """A1 at version 2, archived by cleanup; returns its tombstone's version."""
    apply(
        store,
        1,
        as_text(
            schedule(
                "DNLD",
                fltr("A1", SODT="20NOV260535", ACTT="20NOV260540"),
                seqn="1",
                recs="count",
                dttm=SENT,
            )
        ),
        now=OLD,
    )
    apply(store, 2, as_text(flop("STND", fltr("A1", STND="S1"), seqn="2", dttm=SENT)), now=OLD)
    assert list(run_cleanup(store, POLICY, CONFIG, now=NOW).removed_flids) == ["A1"]
    (tombstone,) = rows(
        pg_db,
        "SELECT STATE_VERSION FROM MSG_EVENT WHERE FLID = 'A1' AND TOPIC = 'schd' "
        "AND PAYLOAD IS NULL",
    )
    assert tombstone[0] == 3
    return int(tombstone[0])


def test_recreated_flight_starts_above_its_tombstone(pg_db: str, store: PgStore) -> None:
    tombstone = _archive_a_flight(store, pg_db)
    apply(store, 3, as_text(flop("STND", fltr("A1", STND="S2"), seqn="3", dttm=SENT)))
    state = store.get_flights(["A1"])["A1"]
    assert state.version > tombstone
    assert state.scalars == {"STND": "S2"}  # a new flight: nothing merged from the archive


def test_batch_path_does_the_same(pg_db: str, store: PgStore) -> None:
    tombstone = _archive_a_flight(store, pg_db)
    rows_ = [
        InboxRow(3, as_text(flop("STND", fltr("A1", STND="S2"), seqn="3", dttm=SENT))),
        InboxRow(4, as_text(flop("TRML", fltr("A1", TRML="T1"), seqn="4", dttm=SENT))),
    ]
    done = service.process_batch(store, rows_, CONFIG, now=NOW, epoch=None)
    assert len(done) == 2
    state = store.get_flights(["A1"])["A1"]
    assert state.version == tombstone + 2  # created above the tombstone, then one update
    events = rows(
        pg_db,
        "SELECT STATE_VERSION FROM MSG_EVENT WHERE FLID = 'A1' AND TOPIC = 'schd' "
        "ORDER BY EVENT_ID",
    )
    versions = [v for (v,) in events]
    assert versions == sorted(versions)  # never goes back down
    assert len(set(versions)) == len(versions)

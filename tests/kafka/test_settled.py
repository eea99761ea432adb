"""The dispatcher tells its observer every outbox row it settled, once (freshness timing)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import psycopg
import pytest

from flightstate_kafka._plan import OutboxRow
from flightstate_kafka.metrics import DispatcherMetrics
from tests.kafka._consume import drain
from tests.kafka._outbox_db import EventModel, insert_rows

pytestmark = [pytest.mark.pg, pytest.mark.kafka]


class SettledRows(DispatcherMetrics):
    """Records the event ids of the rows reported settled."""

    def __init__(self) -> None:
        super().__init__()
        self.event_ids: Counter[int] = Counter()

    def settled(self, rows: Sequence[OutboxRow]) -> None:
        self.event_ids.update(row.event_id for row in rows)


def test_every_settled_row_is_reported_once_coalesced_ones_included(
    outbox_dsn: str, make_dispatcher: Any
) -> None:
    insert_rows(outbox_dsn, EventModel(flids=4, seed=8).next_rows(120))  # coalesces
    observer = SettledRows()
    assert drain(make_dispatcher(observer=observer)) == 240
    with psycopg.connect(outbox_dsn) as conn:
        ids = {int(r[0]) for r in conn.execute("SELECT event_id FROM msg_event")}
    assert set(observer.event_ids) == ids
    assert set(observer.event_ids.values()) == {1}

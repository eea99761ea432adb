"""The pump's decoded-record budget (docs/design.md, "Poison-proof bounds"): a batch is
decoded only until it holds ``batch_max_records`` flight records, whatever the density of
its text, so the batch applied and the one read ahead hold a bounded decoded state; the
rows left over are applied in the next batches, in order, none lost. Pure: memory store
and inbox, real codec and service; nothing is timed."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.errors import ProtocolError
from flightstate_core.domain.records import InboxRow
from flightstate_core.engine import service
from flightstate_core.engine.budget import decoded_weight, prepare_within, rows_weight
from flightstate_core.engine.outcome import Undecodable
from flightstate_core.memory import MemoryInbox, MemoryStore
from flightstate_core.pump import Pump, PumpSettings, ServiceProcessor
from flightstate_core.pump.fifo import ReadAhead
from flightstate_testing.seeded import build_dense_dnld, build_flop, dnld_backlog
from tests.pump.memory_pump import FAST

CONFIG = CoreConfig()
FLIGHTS = 40  # per dense package: small, so the whole file runs in seconds
BUDGET = 100  # records per batch: two packages of 40 reach 80, the third passes it


def _dense_inbox(count: int, flights: int = FLIGHTS) -> MemoryInbox:
    inbox = MemoryInbox()
    for raw in dnld_backlog(count, flights, dense=True):
        inbox.append(raw, datetime.now(UTC))
    return inbox


def _prepare(rows: Sequence[InboxRow]) -> Sequence[InboxRow]:
    return service.prepare_rows(rows, CONFIG)


def test_a_decoded_message_weighs_its_flight_records() -> None:
    package = service.decode_row(InboxRow(1, build_dense_dnld(37).decode()), CONFIG)
    flop = service.decode_row(InboxRow(2, build_flop().decode()), CONFIG)
    assert decoded_weight(package) == 37
    assert decoded_weight(flop) == 1
    assert decoded_weight(Undecodable(ProtocolError("/", "bad"))) == 1


def test_prepare_within_decodes_only_the_prefix_that_reaches_the_budget() -> None:
    rows = _dense_inbox(6).read_after(0, 100)
    prepared, weight = prepare_within(rows, _prepare, BUDGET)
    # 40 + 40 < 100, the third reaches it: three decoded, the other three left unread.
    assert [row.message_id for row in prepared] == [1, 2, 3]
    assert weight == rows_weight(prepared) == 3 * FLIGHTS
    assert isinstance(prepared, service.PreparedRows)
    assert len(prepared.decoded) == 3


def test_one_message_over_the_budget_still_moves_alone() -> None:
    rows = _dense_inbox(3, flights=250).read_after(0, 100)
    prepared, weight = prepare_within(rows, _prepare, BUDGET)
    assert [row.message_id for row in prepared] == [1]
    assert weight == 250


def test_ordinary_flop_batches_are_not_cut() -> None:
    inbox = MemoryInbox()
    for seed in range(300):
        inbox.append(build_flop("ESTT", seed, flid=str(100_000 + seed)).decode())
    rows = inbox.read_after(0, 1000)
    prepared, weight = prepare_within(rows, _prepare, 16_000)
    assert len(prepared) == 300
    assert weight == 300
    assert isinstance(prepared, service.PreparedRows)
    assert len(prepared.decoded) == 300


def test_the_read_ahead_never_holds_more_than_the_budget_plus_its_last_message() -> None:
    inbox = _dense_inbox(9)
    ahead = ReadAhead(inbox, 1000, _prepare, gather_every=0.001, max_records=BUDGET)
    cursor, seen = 0, []
    try:
        while True:
            ahead.start(cursor)
            batch = ahead.take(cursor)
            assert batch is not None
            if not batch:
                break
            assert isinstance(batch, service.PreparedRows)
            weight = rows_weight(batch)
            last = decoded_weight(batch.decoded[batch[-1].message_id][1])
            assert weight - last < BUDGET  # only the message that reached it passes it
            seen.extend(row.message_id for row in batch)
            cursor = batch[-1].message_id
    finally:
        ahead.close()
    assert seen == list(range(1, 10))  # every row, in order, once


class BatchWeights(ServiceProcessor):
    """The real service; records the decoded weight of every batch it applies and the
    most decoded records held at once (the batch applied plus the one read ahead)."""

    def __init__(self, store: MemoryStore) -> None:
        super().__init__(store, CONFIG)
        self.weights: list[int] = []
        self.applied: list[int] = []
        self._lock = threading.Lock()

    def process_batch(self, rows: Sequence[InboxRow], epoch: int | None):  # type: ignore[no-untyped-def]
        with self._lock:
            self.weights.append(rows_weight(rows))
            self.applied.extend(row.message_id for row in rows)
        return super().process_batch(rows, epoch)


@pytest.mark.parametrize("pipelined", [True, False])
def test_the_pump_applies_a_dense_backlog_in_batches_within_the_budget(pipelined: bool) -> None:
    inbox, store = _dense_inbox(12), MemoryStore()
    processor = BatchWeights(store)
    settings = PumpSettings(holder="budget", batch_size=1000, stop_when_idle=True,
                            idle_poll=0.01, retry=FAST, backfill_retry=FAST,
                            pipelined=pipelined, batch_max_records=BUDGET)  # fmt: skip
    pump = Pump(processor=processor, inbox=inbox, lease=store, backfills=store,
                read_cursor=store.inbox_cursor, settings=settings)  # fmt: skip
    stats = pump.run()
    assert stats.outcomes["SUCCEEDED"] == 12
    assert processor.applied == list(range(1, 13))
    # Every batch was decoded whole and holds at most the budget plus its last package
    # (a 1,000-row read of them would hold all twelve: 480 records).
    assert processor.weights
    assert max(processor.weights) < BUDGET + FLIGHTS
    assert sum(processor.weights) == 12 * FLIGHTS


def test_tiny_messages_do_not_overshoot_a_nearly_spent_budget() -> None:
    """Messages shorter than a record (garbage, weight 1 each) still cost a record's worth of
    slice room: a budget of 3 takes three of them, not the whole read."""
    inbox = MemoryInbox()
    for _ in range(10):
        inbox.append("<MSG/>")
    prepared, weight = prepare_within(inbox.read_after(0, 100), _prepare, 3)
    assert [row.message_id for row in prepared] == [1, 2, 3]
    assert weight == 3

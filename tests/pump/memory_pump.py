"""The pump over the in-memory reference store, as the memory pump tests build it: fast
back-offs, an inbox of given texts, and ``Recording``, the real service that notes the order
messages finished in and fails chosen ones on purpose."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.records import InboxRow, ProcessedMessage
from flightstate_core.memory import MemoryInbox, MemoryStore
from flightstate_core.pump import Backoff, Pump, PumpSettings, ServiceProcessor
from flightstate_testing.clock import ManualClock

FAST = Backoff(0.001, 0.005)


def settings(holder: str = "p", **kw: object) -> PumpSettings:
    base: dict[str, object] = {
        "holder": holder, "batch_size": 50, "stop_when_idle": True, "idle_poll": 0.01,
        "standby_poll": 0.01, "retry": FAST, "backfill_retry": FAST,
    }  # fmt: skip
    base.update(kw)
    return PumpSettings(**base)  # type: ignore[arg-type]


def make_inbox(raws: Sequence[str]) -> MemoryInbox:
    inbox = MemoryInbox()
    for raw in raws:
        inbox.append(raw, datetime.now(UTC))
    return inbox


def pump_over(
    store: MemoryStore,
    inbox: object,
    processor: object,
    time: ManualClock | None = None,
    **kw: object,
) -> Pump:
    """A pump over the memory store; with *time*, its waits only move that fake clock."""
    return Pump(
        processor=processor,  # type: ignore[arg-type]
        inbox=inbox,  # type: ignore[arg-type]
        lease=store,
        backfills=store,
        read_cursor=store.inbox_cursor,
        settings=settings(**kw),  # type: ignore[arg-type]
        **({} if time is None else time.pump_time()),  # type: ignore[arg-type]
    )


class Recording(ServiceProcessor):
    """The real service; records the order in which messages were finished, and can fail
    a chosen message a number of times (transiently or unexpectedly)."""

    def __init__(self, store: MemoryStore, fail: dict[int, tuple[int, Exception]] | None = None):
        super().__init__(store, CoreConfig())
        self.order: list[int] = []
        self.fail = dict(fail or {})

    def _maybe_fail(self, message_id: int) -> None:
        if message_id in self.fail:
            left, exc = self.fail[message_id]
            if left > 0:
                self.fail[message_id] = (left - 1, exc)
                raise exc

    def process_batch(self, rows: Sequence[InboxRow], epoch: int | None):  # type: ignore[no-untyped-def]
        for row in rows:
            self._maybe_fail(row.message_id)
        done = super().process_batch(rows, epoch)
        self.order.extend(row.message_id for row in rows)
        return done

    def process_message(
        self, row: InboxRow, epoch: int | None, attempts: int
    ) -> ProcessedMessage | None:
        self._maybe_fail(row.message_id)
        done = super().process_message(row, epoch, attempts)
        self.order.append(row.message_id)
        return done

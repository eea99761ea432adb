"""Run the real pump over an inbox until it is idle, and report what each message became.

``pump_until_idle(store, inbox)`` builds the same ``Pump`` the runner runs (lease, FIFO
batches, retries, backfill after commit), with short waits so a test does not idle, and
stops once the inbox has nothing after the cursor and every backfill was written. It
returns a ``PumpRun``: the pump's counters and every message it finished, in FIFO order.
Needs no driver itself: the store, inbox and lease are whatever adapters the caller passes.
"""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Protocol

from attrs import frozen

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.records import InboxRow, ProcessedMessage
from flightstate_core.memory import MemoryStore
from flightstate_core.ports import BackfillQueue, Inbox, LeaderLease, StateStore
from flightstate_core.pump import Backoff, Pump, PumpSettings, PumpStats, ServiceProcessor

__all__ = ["PumpRun", "PumpableStore", "pump_until_idle"]

_QUICK = Backoff(0.01, 0.2)  # retry waits short enough for a test, still exponential


class PumpableStore(StateStore, BackfillQueue, Protocol):
    """A store the pump can drive alone: transactions, backfill intents, the inbox cursor."""

    def inbox_cursor(self) -> int | None:
        """LAST_MESSAGE_ID of this store's inbox (None before the first message)."""


@frozen
class PumpRun:
    """What one ``pump_until_idle`` did: the pump's counters and the finished messages."""

    stats: PumpStats
    finished: tuple[ProcessedMessage, ...]  # FIFO order; replays (already processed) absent

    @property
    def outcomes(self) -> dict[int, Outcome]:
        """Message id → terminal outcome."""
        return {done.proc.message_id: done.proc.status for done in self.finished}

    @property
    def reasons(self) -> dict[int, str | None]:
        """Message id → the outcome's reason (the element at fault for DEAD)."""
        return {done.proc.message_id: done.proc.reason for done in self.finished}

    def counts(self) -> Counter[str]:
        """Outcome name → number of messages."""
        return Counter(done.proc.status.value for done in self.finished)


class _Recording(ServiceProcessor):
    """The real service processor, keeping every result it returns."""

    def __init__(self, store: StateStore, config: CoreConfig,
                 clock: Callable[[], datetime]) -> None:  # fmt: skip
        super().__init__(store, config, clock)
        self.finished: list[ProcessedMessage] = []

    def process_batch(
        self, rows: Sequence[InboxRow], epoch: int | None
    ) -> Sequence[ProcessedMessage]:
        done = super().process_batch(rows, epoch)
        self.finished.extend(done)
        return done

    def process_message(
        self, row: InboxRow, epoch: int | None, attempts: int
    ) -> ProcessedMessage | None:
        return self._keep(super().process_message(row, epoch, attempts))

    def record_dead(
        self, row: InboxRow, reason: str, epoch: int | None, attempts: int
    ) -> ProcessedMessage | None:
        return self._keep(super().record_dead(row, reason, epoch, attempts))

    def _keep(self, done: ProcessedMessage | None) -> ProcessedMessage | None:
        if done is not None:
            self.finished.append(done)
        return done


def pump_until_idle(
    store: PumpableStore,
    inbox: Inbox,
    *,
    lease: LeaderLease | None = None,
    config: CoreConfig | None = None,
    batch_size: int = 200,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> PumpRun:
    """Pump *inbox* into *store* until idle; see the module docstring.

    *lease* defaults to the store itself when it is one (``MemoryStore``); a PostgreSQL
    store needs ``PgLeaderLease(dsn)`` on the same database (the plugin's fixture passes it).
    """
    if lease is None:
        if not isinstance(store, MemoryStore):
            raise TypeError("pump_until_idle: pass lease= (e.g. PgLeaderLease(dsn))")
        lease = store
    processor = _Recording(store, config or CoreConfig(), clock)
    pump = Pump(
        processor=processor,
        inbox=inbox,
        lease=lease,
        backfills=store,
        read_cursor=store.inbox_cursor,
        settings=PumpSettings(
            holder=f"pump_until_idle:{secrets.token_hex(4)}",
            batch_size=batch_size,
            stop_when_idle=True,
            idle_poll=0.01,
            standby_poll=0.05,
            retry=_QUICK,
            backfill_retry=_QUICK,
        ),
        clock=clock,
    )
    stats = pump.run()
    return PumpRun(stats, tuple(processor.finished))

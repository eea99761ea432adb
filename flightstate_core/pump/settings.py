"""The pump's tunables and counters (``flightstate_core.pump`` re-exports them)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from attrs import define, field, frozen

from flightstate_core.domain.gaps import GapSettings
from flightstate_core.domain.numbers import in_range
from flightstate_core.engine.budget import DEFAULT_BATCH_MAX_BYTES, DEFAULT_BATCH_MAX_RECORDS

__all__ = ["Backoff", "PumpSettings", "PumpStats"]


@frozen
class Backoff:
    """Capped exponential back-off: ``initial * factor**(attempt-1)``, at most ``maximum``."""

    initial: float = 0.05
    maximum: float = 5.0
    factor: float = 2.0

    def delay(self, attempt: int) -> float:
        """Seconds to wait before retry number *attempt* (1-based). A head that fails for
        hours reaches attempt numbers where ``factor ** n`` overflows a float: the delay is
        then simply the maximum (the pump must not die of its own back-off)."""
        try:
            return float(min(self.maximum, self.initial * self.factor ** max(0, attempt - 1)))
        except OverflowError:
            return float(self.maximum)


@frozen
class PumpSettings:
    """Tunables. ``holder`` is the name this pump leads under; it need not be unique: the
    lease adds an instance id per lease object (``LeaderLease``), so two pumps with one name
    in two processes never both lead, and a restarted pump leads at a new epoch."""

    holder: str
    batch_size: int = 200
    lease_ttl: float = 10.0
    renew_every: float = 2.0
    standby_poll: float = 1.0
    #: Seconds between inbox reads once the inbox has been quiet (``pump_polling``).
    idle_poll: float = 0.5
    #: Seconds between inbox reads while messages arrived within ``active_for`` s; after
    #: that the interval doubles per empty read up to ``idle_poll`` (docs/design.md,
    #: "Adaptive inbox polling"). Never slower than ``idle_poll``.
    active_poll: float = field(default=0.002, validator=in_range(0.001, 3600))
    #: Seconds after the last non-empty read during which the pump polls at
    #: ``active_poll`` (0: no fast polling, every idle wait is ``idle_poll``).
    active_for: float = field(default=2.0, validator=in_range(0, 3600))
    retry: Backoff = Backoff()
    unexpected_attempts: int = 3
    #: The retry budget of a head message that keeps failing transiently while the store
    #: answers its health probe (``StoreHealth``): once at least this many such failures
    #: AND ``retry_budget_seconds`` of such time have passed, the message is recorded DEAD
    #: (``requeue`` brings it back). Failures during an outage (the probe fails too), on a
    #: lost session or a read-only store are not counted, and their time is not either
    #: (docs/design.md, "A retry budget for the head message"). 0: no budget, the head
    #: retries for ever.
    retry_budget_attempts: int = field(default=10, validator=in_range(0, 1_000_000))
    #: See ``retry_budget_attempts``: seconds of failing while the store answered.
    retry_budget_seconds: float = field(default=120.0, validator=in_range(0, 7 * 86400))
    backfill_retry: Backoff = Backoff(0.2, 10.0)
    backfill_batch: int = 500
    #: With ``pipelined``: at least this many seconds between the backfill thread's
    #: flushes, so at a few messages per second one inbox UPDATE (and one store write
    #: marking the intents done) carries several messages instead of one each; its CPU
    #: no longer competes with the next message's apply. Bounds how late a row's
    #: backfill lands, not its outcome (docs/design.md, "Backfill cadence"). 0: per commit.
    backfill_interval: float = field(default=0.1, validator=in_range(0, 60))
    stop_when_idle: bool = False
    #: With ``stop_when_idle``: seconds idle with backfill intents still failing (or a
    #: read of the inbox or the store failing all along) before the pump stops anyway
    #: (``stats.left_behind`` says what is left). None: wait for ever.
    idle_backfill_wait: float | None = None
    #: Read the next batch and backfill on worker threads while a batch is applied (their
    #: round trips to the inbox then overlap the apply; the apply itself stays in order).
    pipelined: bool = True
    #: With ``pipelined``: while a batch is applied, the read-ahead reads again every this
    #: many seconds and adds what arrived meanwhile to the next batch, so that batch holds
    #: what had arrived when the apply ended, not only when it began (docs/design.md,
    #: "What 1,000 messages per second cost"). 0: one read at the start of the apply.
    gather_interval: float = field(default=0.005, validator=in_range(0, 3600))
    #: With ``gather_interval``: the read-ahead stops gathering once its rows hold this
    #: many characters of text (each read is bounded by the inbox's own byte budget too).
    gather_max_chars: int = field(default=DEFAULT_BATCH_MAX_BYTES, validator=in_range(1, 2**40))
    #: Decoded flight records per batch (``flightstate_core.engine.budget.prepare_within``): a
    #: batch is decoded in order until it holds this many, the rest waits for the next
    #: read, so the batch applied and the one read ahead hold a bounded decoded state
    #: whatever the text's density (docs/design.md, "Poison-proof bounds").
    batch_max_records: int = field(
        default=DEFAULT_BATCH_MAX_RECORDS, validator=in_range(1, 100_000_000)
    )
    #: Gap-aware reading (docs/design.md "Gaps in the inbox ids"); needs a ``GapReader``
    #: inbox and a ``GapLedger`` store, else the pump reads as before.
    gaps: GapSettings = field(factory=GapSettings)


@define
class PumpStats:
    """Counters for status pages and metrics (read them; the pump writes them)."""

    outcomes: Counter[str] = field(factory=Counter)
    transient_errors: int = 0
    unexpected_errors: int = 0
    replayed: int = 0  # rows found already processed (PROC_STATE), nothing applied
    backfilled: int = 0
    backfill_failures: int = 0
    leadership_changes: int = 0
    last_error: str | None = None
    cursor: int | None = None
    epoch: int | None = None
    is_leader: bool = False
    lag_seconds: float | None = None  # now - DATE_RECEIVED of the last finished message
    store_unavailable: bool = False  # the last lease/store call failed transiently
    backfill_error: str | None = None  # the last backfill failure; None once one succeeds
    left_behind: str | None = None  # why an until-idle pump stopped with work left
    gaps_open: int = 0  # open gap ranges (ids missing below the cursor, still watched)
    oldest_gap_seen: datetime | None = None  # first sighting of the oldest open gap
    held_at: int | None = None  # lowest id of the fresh gap FIFO waits at, if any
    late_rows: int = 0  # rows applied after the pump had gone past their id
    gaps_abandoned: int = 0  # gaps closed empty after the horizon (or over max_open)
    #: The head message while it fails (transiently or not), else None; with how many
    #: failed attempts, since when (``clock``), and what its retry budget has counted so
    #: far (failures while the store answered its probe, and their seconds).
    head_failing: int | None = None
    head_attempts: int = 0
    head_failing_since: datetime | None = None
    head_budget_attempts: int = 0
    head_budget_seconds: float = 0.0
    budget_dead: int = 0  # messages recorded DEAD because their retry budget was spent

    @property
    def processed(self) -> int:
        """Messages finished by this pump (every outcome)."""
        return sum(self.outcomes.values())

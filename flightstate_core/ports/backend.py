"""What a runner needs from one store, whichever it is: the backend port.

Why a port of its own (docs/design.md, "Ports"): the reference runner is a composition root.
It picks a backend by the store DSN's scheme and from then on only calls these Protocols,
so it names no driver, issues no SQL and catches no driver error; each store package
(``flightstate_pg``, ``flightstate_oracle``, ``flightstate_core.memory``) offers the same
factory ``backend.open_backend(dsn, settings)``.

- ``StoreBackend``: opens the adapters of one process (store, lease, outbox, operator
  queries), migrates, says whether the schema is there, and classifies a failure.
- ``OperatorQueries``: the read-mostly questions of ``status``/metrics, the runner's own
  heartbeat, and the operator commands (cleanup, schedule requests, republish, history).
- ``RunnerLease``: a ``LeaderLease`` the runner can also read (who leads, at which epoch).
- ``RunnerStore``: the store capabilities the pump, requeue and ``show`` use.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol

from attrs import field, frozen

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.retention import CleanupReport, RetentionPolicy
from flightstate_core.ports.capabilities import GapLedger, StoreHealth
from flightstate_core.ports.inbox import Inbox
from flightstate_core.ports.lease import LeaderLease
from flightstate_core.ports.outbox import Outbox
from flightstate_core.ports.requests import Outbound, ReconcileReport, RequestStatusReport
from flightstate_core.ports.store import BackfillQueue, FlightReader, StateStore
from flightstate_core.support.preflight import Check

__all__ = [
    "BackendOpener",
    "BackendSettings",
    "InboxLagRows",
    "OperatorQueries",
    "RunnerLease",
    "RunnerStore",
    "SessionWaits",
    "StoreBackend",
    "StoreFailure",
]


class StoreFailure(enum.Enum):
    """What a failed call to the store means for the operator (``StoreBackend.failure``)."""

    UNREACHABLE = "unreachable"  # no server answered: wait for it (``run`` retries)
    REFUSED = "refused"  # a server answered and refused the login: a setting to fix
    OTHER = "other"  # anything else the store raised


@frozen
class SessionWaits:
    """Bounded waits of every store session, seconds (0 turns one off; docs/design.md,
    "Leadership, fencing and bounded waits"). A backend applies those it can."""

    lock_timeout: float = 3.0
    idle_in_transaction: float = 10.0
    statement_timeout: float = 20.0
    keepalive_idle: float = 10.0


@frozen
class BackendSettings:
    """What ``open_backend`` needs besides the DSN. ``holder``: the lease row's
    ``name#instance`` of this process (sessions carry it, so a standby can end a frozen
    leader's sessions); ``instance``: its lease instance id; ``waits``: None for a short
    operator command (its sessions as the DSN says); ``client_dir``: where Oracle Client
    libraries are (empty: the system path)."""

    config: CoreConfig = field(factory=CoreConfig)
    inbox_name: str = "cminmsgs"
    holder: str | None = None
    instance: str | None = None
    waits: SessionWaits | None = None
    client_dir: str = ""


@frozen
class InboxLagRows:
    """An inbox table past a cursor: rows, the head's id, the newest id, the head's
    DATE_RECEIVED (as stored) and its age by the inbox server's own clock (seconds)."""

    count: int
    head_id: int | None
    last_id: int | None
    head_received: datetime | None
    head_server_age: float | None


class RunnerStore(StateStore, FlightReader, BackfillQueue, GapLedger, StoreHealth, Protocol):
    """The store as the runner uses it: pump, requeue, ``show`` and gap status."""

    def inbox_cursor(self) -> int | None:
        """The committed inbox cursor (None before the first message)."""

    def gap_counters(self) -> tuple[int, int]:
        """(late rows applied, gaps abandoned) of the store's inbox."""

    def close(self) -> None:
        """End the store's own connections (idempotent)."""


class RunnerLease(LeaderLease, Protocol):
    """The lease, readable: ``status`` for ``status`` and standbys, ``holds`` for the
    dispatch fence; ``instance`` is this process's lease instance id."""

    @property
    def instance(self) -> str:
        """This process's instance id (the part after ``#`` in the lease row)."""

    def stored_holder(self, holder: str) -> str:
        """The lease row's HOLDER when this instance leads as *holder*."""

    def holds(self, holder: str, epoch: int) -> bool:
        """Whether this instance of *holder* still has an unexpired lease at *epoch*."""

    def status(self) -> tuple[int, str | None, bool] | None:
        """(EPOCH, HOLDER as stored, unexpired) of the lease row, or None without a row."""

    def close(self) -> None:
        """End this handle's own connection, if it has one (a later call reconnects)."""


class OperatorQueries(Protocol):
    """Questions and operator actions over one store; one object keeps its connections
    between calls (the runner's monitor asks every 2 s), ``close`` ends them."""

    def outcome_counts(self) -> dict[str, int]:
        """PROC_STATE rows by STATUS."""

    def dead_messages(self, limit: int) -> list[dict[str, Any]]:
        """The newest DEAD messages: message_id, type, styp, reason, attempts, processed_at."""

    def dead_by_reason(self, limit: int) -> list[dict[str, Any]]:
        """DEAD counted by reason, most frequent first: reason, count, newest_id."""

    def pending_backfills(self) -> int:
        """Committed messages whose outcome is not yet written back to the inbox."""

    def failing_backfills(self) -> dict[str, Any]:
        """Pending write-backs that failed: failing, max_attempts, last_error (newest)."""

    def outbox_counts(self) -> tuple[int, int]:
        """(MSG_EVENT rows, rows at or below the dispatch watermark)."""

    def inbox_lag(self, table: str, after: int) -> InboxLagRows:
        """The store-side inbox table *table* past *after* (``PermanentError`` naming the
        table when it does not exist)."""

    def runner_tables_missing(self) -> list[str]:
        """The runner's tables (RUNNER_HEARTBEAT, RUNNER_REQUEUE) not in the store."""

    def write_heartbeat(
        self, holder: str, *, leader: bool, last_error: str | None, stats: dict[str, Any]
    ) -> None:
        """Record this process's state for ``status`` (one row per holder)."""

    def last_heartbeat(self) -> dict[str, Any] | None:
        """The newest heartbeat: holder, updated_at, is_leader, last_error, stats."""

    def live_runners(self, fresh_s: float) -> list[dict[str, Any]]:
        """Runners that reported within *fresh_s* and did not say they stopped: holder,
        updated_at, is_leader, epoch, leader_since."""

    def leader_since(self, holder: str, epoch: int) -> str | None:
        """When *holder* took the lease at *epoch*, as its heartbeat says (None: unknown)."""

    def run_cleanup(self, policy: RetentionPolicy, *, now: datetime, epoch: int | None = None,
                    limit: int | None = None) -> CleanupReport:  # fmt: skip
        """Archive and remove the flights the retention rules release (fenced by *epoch*)."""

    def request_schedule(self, outbound: Outbound, start: datetime, end: datetime, *,
                         now: datetime) -> int:  # fmt: skip
        """Send an RQFD for [start, end] through *outbound*; the request id."""

    def resend_due(self, outbound: Outbound, *, now: datetime, timeout: timedelta,
                   max_attempts: int) -> None:  # fmt: skip
        """Resend unanswered requests older than *timeout* (FAILED after *max_attempts*)."""

    def reconcile_responses(self, *, now: datetime) -> ReconcileReport:
        """Match applied SCHD RESP answers to their requests."""

    def request_status(self, *, listed: int = 50) -> RequestStatusReport:
        """Schedule requests by status, the newest *listed* in full."""

    def republish(self, *, now: datetime, flids: Sequence[str] | None = None) -> int:
        """A fresh ``schd`` record of the current state (all flights, or *flids*)."""

    def flight_history(self, flid: str) -> list[dict[str, Any]]:
        """The messages that changed *flid*, in order, with the fields each changed."""

    def close(self) -> None:
        """End this object's connections (idempotent; a later call reconnects)."""


class StoreBackend(Protocol):
    """One store for one process. Nothing connects before a call needs it; every method
    that opens an adapter returns a new one with its own connection(s), for one thread."""

    @property
    def kind(self) -> str:
        """``postgresql``, ``oracle`` or ``memory``: for ``status`` and messages."""

    def store(self, *, cache: bool = True) -> RunnerStore:
        """A store (``cache``: the writer's state cache, for the pump only)."""

    def lease(self) -> RunnerLease:
        """A lease handle of this process's instance (``BackendSettings.instance``)."""

    def outbox(self) -> Outbox:
        """The outbox the dispatcher reads (and ``status`` counts)."""

    def queries(self) -> OperatorQueries:
        """Operator queries with their own connection(s)."""

    def inbox(self, table: str, *, local_tz: str, received_tz: str | None, read_bytes: int,
              message_bytes: int) -> Inbox:  # fmt: skip
        """An inbox table in the store's own database (a lab setup without MySQL), reading
        at most *read_bytes* per call and no text over *message_bytes* (the engine's
        ``ReadBudget``); ``ConfigError`` naming FLIGHTSTATE_MYSQL_DSN when there is none."""

    def insert_inbox(self, raws: Sequence[str], table: str, *,
                     received_tz: str | None) -> list[int]:  # fmt: skip
        """Create the store-side inbox table if missing and insert *raws*; their ids."""

    def migrate(self) -> list[str]:
        """Apply pending schema migrations (runner tables included); the ids applied."""

    def schema_missing(self) -> str | None:
        """A flightstate table the store lacks (None: migrated): the operator then reads
        "run `flightstate migrate` first"."""

    def failure(self, exc: BaseException) -> StoreFailure:
        """What *exc* (a core error raised by this backend, or its cause) means."""

    def checks(self, waits: SessionWaits) -> list[Check]:
        """The store's deployment checks (``flightstate check``), read-only: reachable
        (one failed check when not), schema at the code's migrations, the *waits* in effect
        where the store applies them, clock, grants where the store can read them, leader."""

    def close(self) -> None:
        """End what the backend itself holds (a pool); adapters close on their own."""


class BackendOpener(Protocol):
    """The factory every store package offers as ``<package>.backend.open_backend``."""

    def __call__(self, dsn: str, settings: BackendSettings) -> StoreBackend:
        """A backend on *dsn*; ``ConfigError`` (one line) if it cannot be used at all."""

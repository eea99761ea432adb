"""Ports: every Protocol an adapter implements, and every optional capability the core
asks ``isinstance`` about, in one listing with its guarantee. Adapters don't inherit; the
contract suites (``flightstate_core.testing``) and mypy prove conformance.

Ports (every backend of that role implements them):

- ``StateStore``: ``transaction()`` commits on normal exit, rolls back on exception.
- ``StateTransaction``: after ``lock_pipeline(epoch)`` (stale epoch: LeadershipLost) reads
  see the latest commit and everything written commits together.
- ``Transactional``: a ``StateStore`` whose ``transaction()`` keeps its transaction type.
- ``FlightReader``: every table of a read from one snapshot, pages in FLID order.
- ``BackfillQueue``: intents written with their message, oldest first, never an outcome.
- ``Inbox``: rows after a cursor in id order, never modified; backfill idempotent.
- ``Outbox``: events in commit order; every row at or below the watermark was delivered.
- ``OutboxRow``: the fields of one outbox row a Kafka record needs.
- ``LeaderLease``: one holder instance at a time, its epoch only rising on a takeover.
- ``MessageProcessor``: FIFO rows in one transaction, or a committed prefix then a raise.
- ``ResponseLog``: a RESP is matched once, to the oldest open request covering it.
- ``Outbound``: a sent message has its row id once committed (``RequestStatusReport``,
  ``ReconcileReport``: what the request log reports, as plain values).
- ``StepWriter`` (domain, re-exported): a planned save's statements, in ``WRITE_STEPS``.
- ``StoreBackend``: one store for one runner process: adapters, migrate, schema check, and
  a failure told as unreachable / refused / other, so the runner names no driver.
- ``OperatorQueries``: status, heartbeat and operator commands answer from committed data.
- ``RunnerLease``: a ``LeaderLease`` whose row reads back what was last committed.
- ``RunnerStore``: the store capabilities of the pump, requeue and ``show``, in one type.

Capabilities (optional; the core works without each):

- ``BatchTransaction``: batch reads, and ``save_many`` = ``save`` of each in order.
- ``UnitReadAhead``: announced reads answer exactly as they would without it.
- ``ArchivedVersions``: the highest archived version of each FLID with history.
- ``DeadMessages``: only a DEAD message is claimed for requeue; anything else is untouched.
- ``ScheduleResponses``: the transaction's own ``ResponseLog``, committing with it.
- ``GapLedger``: open gaps stored with the cursor in the message's own transaction.
- ``StoreHealth``: ``ping`` answers within seconds, False (never raises) when down.
- ``GapReader``: rows by id range, and unprocessed ones, bounded and in id order.
- ``CommitWatch``: a wake-up after each commit that wrote events, and after a reconnect.

One module per noun: ``store``, ``inbox``, ``outbox``, ``lease``, ``processor``,
``requests``, ``capabilities`` and ``backend``; this face lists them all.
"""

from __future__ import annotations

from flightstate_core.domain.write_plan import StepWriter
from flightstate_core.ports.backend import (
    BackendOpener,
    BackendSettings,
    InboxLagRows,
    OperatorQueries,
    RunnerLease,
    RunnerStore,
    SessionWaits,
    StoreBackend,
    StoreFailure,
)
from flightstate_core.ports.capabilities import (
    ArchivedVersions,
    BatchTransaction,
    CommitWatch,
    DeadClaim,
    DeadMessages,
    GapLedger,
    GapReader,
    ScheduleResponses,
    StoreHealth,
    UnitReadAhead,
)
from flightstate_core.ports.inbox import Inbox
from flightstate_core.ports.lease import LeaderLease
from flightstate_core.ports.outbox import Outbox, OutboxRow
from flightstate_core.ports.processor import MessageProcessor
from flightstate_core.ports.requests import (
    Outbound,
    ReconcileReport,
    RequestStatus,
    RequestStatusReport,
    ResponseLog,
    ScheduleRequestRecord,
    Window,
)
from flightstate_core.ports.store import (
    BackfillQueue,
    DuplicateKey,
    FlightReader,
    StateStore,
    StateTransaction,
    Transactional,
)

__all__ = [
    "ArchivedVersions",
    "BackendOpener",
    "BackendSettings",
    "BackfillQueue",
    "BatchTransaction",
    "CommitWatch",
    "DeadClaim",
    "DeadMessages",
    "DuplicateKey",
    "FlightReader",
    "GapLedger",
    "GapReader",
    "Inbox",
    "InboxLagRows",
    "LeaderLease",
    "MessageProcessor",
    "OperatorQueries",
    "Outbound",
    "Outbox",
    "OutboxRow",
    "ReconcileReport",
    "RequestStatus",
    "RequestStatusReport",
    "ResponseLog",
    "RunnerLease",
    "RunnerStore",
    "ScheduleRequestRecord",
    "ScheduleResponses",
    "SessionWaits",
    "StateStore",
    "StateTransaction",
    "StepWriter",
    "StoreBackend",
    "StoreFailure",
    "StoreHealth",
    "Transactional",
    "UnitReadAhead",
    "Window",
]

"""Every store-side contract suite on PostgreSQL, over one fixture: ``fresh_pg``, the DSN
of an empty migrated store.

The project's tests import these classes (``tests/pg``), where ``fresh_pg`` is a new
database on each of two servers; ``flightstate selftest`` collects this module with
``flightstate_testing.selftest.plugin``, where it is a new schema in the site's database.
One list of suites, so the site runs exactly what CI runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from attrs import define
from psycopg.conninfo import make_conninfo

from flightstate_core.domain.config import CoreConfig
from flightstate_core.engine.lifecycle import RetentionPolicy
from flightstate_core.engine.processor import ServiceProcessor
from flightstate_core.ports import LeaderLease, StateStore
from flightstate_core.testing.archived_contract import LATER, ArchivedVersionsContract
from flightstate_core.testing.batch_contract import BatchTransactionContract
from flightstate_core.testing.commit_watch_contract import CommitWatchContract
from flightstate_core.testing.health_contract import StoreHealthContract
from flightstate_core.testing.lease_contract import LeaseContract
from flightstate_core.testing.outbox_contract import OutboxContract
from flightstate_core.testing.processor_contract import ProcessorContract
from flightstate_core.testing.read_ahead_contract import UnitReadAheadContract
from flightstate_core.testing.requeue_contract import DeadMessagesContract
from flightstate_core.testing.responses_contract import RecordingOutbound, ScheduleResponsesContract
from flightstate_core.testing.samples import NOW
from flightstate_core.testing.store_contract import StoreContract
from flightstate_pg import PgStore
from flightstate_pg.lease import PgLeaderLease
from flightstate_pg.lifecycle import run_cleanup
from flightstate_pg.outbox import PgOutbox
from flightstate_pg.requests import request_schedule
from flightstate_testing.names import unique_name
from flightstate_testing.pg_hooks import PgStoreHooks

__all__ = [
    "TestPgArchivedVersionsContract",
    "TestPgBatchContract",
    "TestPgCommitWatchContract",
    "TestPgDeadMessagesContract",
    "TestPgHealthContract",
    "TestPgLeaseContract",
    "TestPgOutboxContract",
    "TestPgProcessorContract",
    "TestPgReadAheadContract",
    "TestPgScheduleResponsesContract",
    "TestPgStoreContract",
]

_RELEASE_DELETED = RetentionPolicy(retention=timedelta(0), quiet_period=timedelta(0))


class TestPgStoreContract(PgStoreHooks, StoreContract):
    """Every store contract test."""


class TestPgBatchContract(PgStoreHooks, BatchTransactionContract):
    """The batch transaction, the production write path."""


class TestPgReadAheadContract(PgStoreHooks, UnitReadAheadContract):
    """``UnitReadAhead``: the unit's reads in one round trip."""


class TestPgDeadMessagesContract(PgStoreHooks, DeadMessagesContract):
    """``DeadMessages``: requeue of DEAD messages, audited in RUNNER_REQUEUE."""


class TestPgHealthContract(StoreHealthContract):
    """``StoreHealth``; nothing listens on port 1."""

    @pytest.fixture
    def store(self, fresh_pg: str) -> Iterator[PgStore]:
        store = PgStore(fresh_pg)
        yield store
        store.close()

    def unreachable(self, store: Any) -> PgStore:
        return PgStore(make_conninfo("host=127.0.0.1 port=1 dbname=x user=postgres"))


class TestPgArchivedVersionsContract(PgStoreHooks, ArchivedVersionsContract):
    """``ArchivedVersions`` (FLIGHT_SCHD_HIST)."""

    def archive(self, store: Any) -> None:
        run_cleanup(store, _RELEASE_DELETED, CoreConfig(), now=LATER)


class TestPgScheduleResponsesContract(PgStoreHooks, ScheduleResponsesContract):
    """``ScheduleResponses`` (SCHD_REQUEST, SCHD_RESPONSE_LOG)."""

    def request(self, store: Any, window: tuple[datetime, datetime]) -> int:
        start, end = window
        return request_schedule(store, RecordingOutbound(), start, end, now=NOW,
                                config=CoreConfig())  # fmt: skip


@define
class _Processing:
    store: PgStore
    processor: ServiceProcessor


class TestPgProcessorContract(ProcessorContract):
    """``MessageProcessor`` (``ServiceProcessor``) on ``PgStore``."""

    @pytest.fixture
    def processor_harness(self, fresh_pg: str) -> Iterator[_Processing]:
        store = PgStore(fresh_pg)
        yield _Processing(store, ServiceProcessor(store, CoreConfig()))
        store.close()


@define
class _Outboxes:
    store: PgStore
    outbox: PgOutbox


class _OutboxHarness:
    """``PgStore`` writes, ``PgOutbox`` reads, on a channel of their own: a runner
    listening on the same database never hears these commits, nor these tests its."""

    @pytest.fixture
    def outbox_harness(self, fresh_pg: str) -> Iterator[_Outboxes]:
        channel = unique_name("fs_selftest")
        harness = _Outboxes(PgStore(fresh_pg, CoreConfig(), notify_channel=channel),
                            PgOutbox(fresh_pg, channel=channel))  # fmt: skip
        yield harness
        harness.outbox.close()
        harness.store.close()


class TestPgOutboxContract(_OutboxHarness, OutboxContract):
    """Every outbox contract test."""


class TestPgCommitWatchContract(_OutboxHarness, CommitWatchContract):
    """``CommitWatch``: LISTEN/NOTIFY wake-ups."""


class _Leases:
    """Each handle is another ``PgLeaderLease`` (its own connection, as another pump's)."""

    def __init__(self, dsn: str) -> None:
        self._dsn = dsn
        self._store = PgStore(dsn)
        self._leases: list[PgLeaderLease] = []

    @property
    def store(self) -> StateStore:
        return self._store

    def lease(self) -> LeaderLease:
        lease = PgLeaderLease(self._dsn)
        self._leases.append(lease)
        return lease

    def close(self) -> None:
        for lease in self._leases:
            lease.close()
        self._store.close()


class TestPgLeaseContract(LeaseContract):
    """Every lease contract test on the PIPELINE_LOCK row."""

    @pytest.fixture
    def lease_harness(self, fresh_pg: str) -> Iterator[_Leases]:
        harness = _Leases(fresh_pg)
        yield harness
        harness.close()

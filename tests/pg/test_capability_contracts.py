"""The optional capabilities' contracts on PostgreSQL: the unit's reads in one round trip,
requeue of DEAD messages (audited in RUNNER_REQUEUE), the health probe, the archived
versions and the schedule-response log; and the ``MessageProcessor`` contract of the
engine's ``ServiceProcessor`` on it."""

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
from flightstate_core.testing.archived_contract import LATER, ArchivedVersionsContract
from flightstate_core.testing.health_contract import StoreHealthContract
from flightstate_core.testing.processor_contract import ProcessorContract
from flightstate_core.testing.read_ahead_contract import UnitReadAheadContract
from flightstate_core.testing.requeue_contract import DeadMessagesContract
from flightstate_core.testing.responses_contract import RecordingOutbound, ScheduleResponsesContract
from flightstate_core.testing.samples import NOW
from flightstate_pg import PgStore
from flightstate_pg.lifecycle import run_cleanup
from flightstate_pg.requests import request_schedule
from tests.pg._store_hooks import PgStoreHooks

pytestmark = pytest.mark.pg

_RELEASE_DELETED = RetentionPolicy(retention=timedelta(0), quiet_period=timedelta(0))


class TestPgReadAheadContract(PgStoreHooks, UnitReadAheadContract):
    """``UnitReadAhead`` on both PostgreSQL servers."""


class TestPgDeadMessagesContract(PgStoreHooks, DeadMessagesContract):
    """``DeadMessages`` on both PostgreSQL servers."""


class TestPgHealthContract(StoreHealthContract):
    """``StoreHealth`` on both PostgreSQL servers; nothing listens on port 1."""

    @pytest.fixture
    def store(self, fresh_pg: str) -> Iterator[PgStore]:
        store = PgStore(fresh_pg)
        yield store
        store.close()

    def unreachable(self, store: Any) -> PgStore:
        return PgStore(make_conninfo("host=127.0.0.1 port=1 dbname=x user=postgres"))


class TestPgArchivedVersionsContract(PgStoreHooks, ArchivedVersionsContract):
    """``ArchivedVersions`` on both PostgreSQL servers (FLIGHT_SCHD_HIST)."""

    def archive(self, store: Any) -> None:
        run_cleanup(store, _RELEASE_DELETED, CoreConfig(), now=LATER)


class TestPgScheduleResponsesContract(PgStoreHooks, ScheduleResponsesContract):
    """``ScheduleResponses`` on both PostgreSQL servers (SCHD_REQUEST, SCHD_RESPONSE_LOG)."""

    def request(self, store: Any, window: tuple[datetime, datetime]) -> int:
        start, end = window
        return request_schedule(store, RecordingOutbound(), start, end, now=NOW,
                                config=CoreConfig())  # fmt: skip


@define
class _Processing:
    store: PgStore
    processor: ServiceProcessor


class TestPgProcessorContract(ProcessorContract):
    """``MessageProcessor`` (``ServiceProcessor``) on both PostgreSQL servers."""

    @pytest.fixture
    def processor_harness(self, fresh_pg: str) -> Iterator[_Processing]:
        store = PgStore(fresh_pg)
        yield _Processing(store, ServiceProcessor(store, CoreConfig()))
        store.close()

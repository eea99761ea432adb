"""The optional capabilities' contracts on Oracle 11.2: requeue of DEAD messages, the
archived versions and the schedule-response log (Oracle has no read-ahead; its health
probe is checked in ``test_health_oracle``).

Runs when ``FLIGHTSTATE_TEST_ORACLE_DSN`` and ``FLIGHTSTATE_ORACLE_CLIENT_DIR`` are set (see
``tests/oracle/conftest.py``: a dedicated schema, emptied before each test); SKIPPED without.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from flightstate_core.domain.config import CoreConfig
from flightstate_core.engine.lifecycle import RetentionPolicy
from flightstate_core.testing.archived_contract import LATER, ArchivedVersionsContract
from flightstate_core.testing.requeue_contract import DeadMessagesContract
from flightstate_core.testing.responses_contract import RecordingOutbound, ScheduleResponsesContract
from flightstate_core.testing.samples import NOW
from flightstate_oracle.lifecycle import run_cleanup
from flightstate_oracle.requests import request_schedule
from tests.oracle._store_hooks import OracleStoreHooks

pytestmark = pytest.mark.oracle

_RELEASE_DELETED = RetentionPolicy(retention=timedelta(0), quiet_period=timedelta(0))


class TestOracleDeadMessagesContract(OracleStoreHooks, DeadMessagesContract):
    """``DeadMessages`` on the emptied test schema."""


class TestOracleArchivedVersionsContract(OracleStoreHooks, ArchivedVersionsContract):
    """``ArchivedVersions`` on the emptied test schema (FLIGHT_SCHD_HIST)."""

    def archive(self, store: Any) -> None:
        run_cleanup(store, _RELEASE_DELETED, CoreConfig(), now=LATER)


class TestOracleScheduleResponsesContract(OracleStoreHooks, ScheduleResponsesContract):
    """``ScheduleResponses`` on the emptied test schema (SCHD_REQUEST, SCHD_RESPONSE_LOG)."""

    def request(self, store: Any, window: tuple[datetime, datetime]) -> int:
        start, end = window
        return request_schedule(store, RecordingOutbound(), start, end, now=NOW,
                                config=CoreConfig())  # fmt: skip

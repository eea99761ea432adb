"""Every store-side contract suite on PostgreSQL, on both servers (``fresh_pg``: the
machine's and an embedded one). The suites are the classes ``flightstate selftest`` runs on
a site's own database (``flightstate_testing.selftest.pg_suites``): one list for both."""

from __future__ import annotations

import pytest

from flightstate_testing.selftest.pg_suites import (
    TestPgArchivedVersionsContract,
    TestPgBatchContract,
    TestPgCommitWatchContract,
    TestPgDeadMessagesContract,
    TestPgHealthContract,
    TestPgLeaseContract,
    TestPgOutboxContract,
    TestPgProcessorContract,
    TestPgReadAheadContract,
    TestPgScheduleResponsesContract,
    TestPgStoreContract,
)

pytestmark = pytest.mark.pg

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

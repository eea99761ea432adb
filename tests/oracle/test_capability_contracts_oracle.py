"""The optional capabilities' contracts on Oracle 11.2: requeue of DEAD messages (Oracle
has no read-ahead; its health probe is checked in ``test_health_oracle``).

Runs when ``FLIGHTSTATE_TEST_ORACLE_DSN`` and ``FLIGHTSTATE_ORACLE_CLIENT_DIR`` are set (see
``tests/oracle/conftest.py``: a dedicated schema, emptied before each test); SKIPPED without.
"""

from __future__ import annotations

import pytest

from flightstate_core.testing.requeue_contract import DeadMessagesContract
from tests.oracle._store_hooks import OracleStoreHooks

pytestmark = pytest.mark.oracle


class TestOracleDeadMessagesContract(OracleStoreHooks, DeadMessagesContract):
    """``DeadMessages`` on the emptied test schema."""

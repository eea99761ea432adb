"""The shared store contract on Oracle 11.2 (needs a real server; never run on this machine).

Runs when ``FLIGHTSTATE_TEST_ORACLE_DSN`` (``oracle://user:pw@host:port/service`` of a
DEDICATED, otherwise empty schema: every flightstate table is emptied before each test) and
``FLIGHTSTATE_ORACLE_CLIENT_DIR`` (Oracle Client libraries for thick mode) are set. Without
them every test is SKIPPED, also under ``FLIGHTSTATE_REQUIRE_SERVICES=1``: no Oracle 11g can
run here.
"""

from __future__ import annotations

import pytest

from flightstate_core.testing.store_contract import StoreContract
from tests.oracle._store_hooks import OracleStoreHooks

pytestmark = pytest.mark.oracle


class TestOracleStoreContract(OracleStoreHooks, StoreContract):
    """Every contract test on Oracle 11.2."""

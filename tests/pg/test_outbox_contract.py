"""The outbox contract on PostgreSQL: ``PgStore`` writes, ``PgOutbox`` reads and moves; and
the commit wake-ups of ``PgOutbox`` (``CommitWatch``: LISTEN/NOTIFY)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from attrs import define

from flightstate_core.domain.config import CoreConfig
from flightstate_core.testing.commit_watch_contract import CommitWatchContract
from flightstate_core.testing.outbox_contract import OutboxContract
from flightstate_pg import PgStore
from flightstate_pg.outbox import PgOutbox

pytestmark = pytest.mark.pg


@define
class _Harness:
    store: PgStore
    outbox: PgOutbox


@pytest.fixture
def outbox_harness(pg_store_dsn: str) -> Iterator[_Harness]:
    """A fresh migrated database: ``PgStore`` writes, ``PgOutbox`` reads."""
    harness = _Harness(PgStore(pg_store_dsn, CoreConfig()), PgOutbox(pg_store_dsn))
    yield harness
    harness.outbox.close()
    harness.store.close()


class TestPgOutboxContract(OutboxContract):
    """Every outbox contract test on a fresh migrated database."""


class TestPgCommitWatchContract(CommitWatchContract):
    """Every commit-watch contract test on a fresh migrated database."""

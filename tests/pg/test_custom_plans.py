"""Every statement of the store is planned for its own parameters (``flightstate_pg._pool``):
a generic plan chosen while a table was small must not outlive the table's growth."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.records import InboxRow
from flightstate_core.engine import service
from flightstate_pg import PgStore
from flightstate_pg._pool import lazy_connection
from flightstate_testing.traffic import TrafficGenerator

CONFIG = CoreConfig()
NOW = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)
#: psycopg prepares a statement on its 5th execution; PostgreSQL then plans it for its
#: parameters 5 times before it may switch to a generic plan. Past both, with room.
EXECUTIONS = 14


TRAFFIC = TrafficGenerator(seed=3)


@pytest.mark.pg
def test_no_generic_plan_is_kept_for_the_stores_statements(fresh_pg: str) -> None:
    store = PgStore(fresh_pg, CONFIG)
    try:
        for n in range(1, EXECUTIONS + 1):  # the same statements each time, tables growing
            rows = [
                InboxRow(2 * n - 1, TRAFFIC.estimate_flop(100 + 2 * n)),
                InboxRow(2 * n, TRAFFIC.estimate_flop(101 + 2 * n)),
            ]
            results = service.process_batch(store, rows, CONFIG, now=NOW, epoch=None)
            assert [r.proc.status.value for r in results] == ["SUCCEEDED", "SUCCEEDED"]
        with store.transaction() as tx:
            conn = tx._conn
            mode = conn.execute("SHOW plan_cache_mode").fetchone()
            version = conn.info.server_version
            # A statement without parameters has only the one plan: not a choice, not counted.
            plans = conn.execute(
                "SELECT count(*), COALESCE(sum(generic_plans) FILTER"
                " (WHERE cardinality(parameter_types) > 0), 0), COALESCE(sum(custom_plans), 0)"
                " FROM pg_prepared_statements"
            ).fetchone() if version >= 140000 else None  # fmt: skip
    finally:
        store.close()
    assert mode == ("force_custom_plan",)
    if plans is None:
        pytest.skip(f"server {version}: pg_prepared_statements counts plans from 14 on")
    prepared, generic, custom = plans
    assert prepared > 0  # psycopg did prepare the repeated statements
    assert generic == 0
    assert custom > 0


@pytest.mark.pg
def test_the_adapters_own_sessions_plan_each_execution_too(fresh_pg: str) -> None:
    """The lease, the PostgreSQL inbox table and the outbox read tables that grow from
    empty as well (``lazy_connection``)."""
    lazy = lazy_connection(fresh_pg, 5)
    try:
        with lazy.use() as conn:
            assert conn.execute("SHOW plan_cache_mode").fetchone() == ("force_custom_plan",)
    finally:
        lazy.close()

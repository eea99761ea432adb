"""``OracleStore.ping``, the pump's retry-budget probe (docs/design.md, "A retry budget
for the head message"), on a real Oracle 11.2: it answers while another session holds the
pipeline row a writer would wait for. Skipped without ``FLIGHTSTATE_TEST_ORACLE_DSN``."""

from __future__ import annotations

import pytest

from flightstate_oracle import OracleStore

pytestmark = pytest.mark.oracle


def test_ping_answers_while_a_row_is_locked(oracle_store: OracleStore) -> None:
    with oracle_store.pool.acquire() as holder, holder.cursor() as cur:
        cur.execute("SELECT 1 FROM PIPELINE_LOCK FOR UPDATE")
        assert oracle_store.ping() is True
        holder.rollback()

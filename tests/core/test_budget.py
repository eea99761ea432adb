"""Reads bounded by bytes as well as rows (docs/design.md, "Poison-proof bounds"): the plan
and the DEAD outcome of a row left unread (pure; the adapters run the same plan in the inbox
contract)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.errors import ConfigError
from flightstate_core.domain.records import InboxRow
from flightstate_core.engine.budget import ReadBudget
from flightstate_core.engine.service import Undecodable, decode_row, process_batch
from flightstate_core.memory import MemoryStore


def test_plan_takes_the_prefix_within_the_byte_budget() -> None:
    budget = ReadBudget(max_bytes=100, max_message_bytes=1000)
    plan = budget.plan([(1, 40), (2, 50), (3, 20), (4, 5)])
    assert plan.fetch == (1, 2)
    assert plan.oversize == {}


def test_plan_always_takes_one_row() -> None:
    plan = ReadBudget(max_bytes=10, max_message_bytes=1000).plan([(7, 900), (8, 1)])
    assert plan.fetch == (7,)


def test_over_limit_rows_cost_nothing_and_are_not_fetched() -> None:
    budget = ReadBudget(max_bytes=100, max_message_bytes=1000)
    plan = budget.plan([(1, 60), (2, 15_000_000), (3, 40), (4, 10)])
    assert plan.fetch == (1, 3)
    assert plan.oversize == {2: 15_000_000}
    assert plan.ids == [1, 2, 3]
    assert budget.plan([]).ids == []


def test_budget_must_be_positive() -> None:
    with pytest.raises(ConfigError):
        ReadBudget(max_bytes=0)


def test_an_unread_row_is_dead_with_its_size_and_moves_the_fifo() -> None:
    config = CoreConfig()
    row = InboxRow(3, "", datetime(2026, 12, 1, tzinfo=UTC), size=15_700_000)
    decoded = decode_row(row, config)
    assert isinstance(decoded, Undecodable)
    assert decoded.error.xpath == "/"
    assert "15700000 bytes" in decoded.error.reason
    store = MemoryStore()
    (done,) = process_batch(store, [row], config, now=datetime.now(UTC), epoch=None)
    assert done.proc.status.value == "DEAD"
    assert store.inbox_cursor() == 3

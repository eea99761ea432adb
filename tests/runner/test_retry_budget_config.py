"""The runner's side of the head message's retry budget (docs/design.md, "A retry budget
for the head message"): FLIGHTSTATE_RETRY_BUDGET_* reach the pump, bad values are refused
naming the setting, and a failing head shows in the heartbeat, ``status`` and metrics."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

import pytest

from flightstate_core.domain.errors import ConfigError
from flightstate_core.ports import BackendSettings
from flightstate_core.pump import PumpStats
from flightstate_pg import PgStore
from flightstate_pg.backend import PgBackend
from flightstate_pg.inbox import PgInbox
from flightstate_pg.lease import PgLeaderLease
from flightstate_pg.outbox import PgOutbox
from flightstate_runner import status
from flightstate_runner.config import load_config
from flightstate_runner.metrics import RunnerMetrics
from flightstate_runner.observe import head_failing_report
from flightstate_runner.wiring import Services, build_pump

NOWHERE = "host=127.0.0.1 port=1 dbname=x user=postgres"  # nothing connects at construction


def test_the_budget_settings_reach_the_pump() -> None:
    config = load_config(None, {"FLIGHTSTATE_RETRY_BUDGET_ATTEMPTS": "4",
                                "FLIGHTSTATE_RETRY_BUDGET_SECONDS": "7.5"})  # fmt: skip
    store = PgStore(NOWHERE)
    backend = PgBackend(NOWHERE, BackendSettings())
    services = Services(config, backend, store, PgInbox(NOWHERE), PgLeaderLease(NOWHERE),
                        PgOutbox(NOWHERE))  # fmt: skip
    pump = build_pump(services, RunnerMetrics(), until_idle=True, log=logging.getLogger("t"))
    assert (pump.settings.retry_budget_attempts, pump.settings.retry_budget_seconds) == (4, 7.5)
    assert pump._fifo._health is store  # the store's probe, found on it
    assert load_config(None, {}).retry_budget_attempts == 10
    assert load_config(None, {}).retry_budget_seconds == 120.0
    services.close()


@pytest.mark.parametrize(
    ("name", "value"),
    [("retry_budget_attempts", "-1"), ("retry_budget_attempts", "some"),
     ("retry_budget_seconds", "nan"), ("retry_budget_seconds", "-3")],
)  # fmt: skip
def test_bad_budget_values_name_the_setting(name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=name):
        load_config(None, {f"FLIGHTSTATE_{name.upper()}": value})


def test_a_failing_head_shows_in_the_heartbeat_and_status() -> None:
    stats = PumpStats(head_failing=42, head_attempts=7, head_budget_attempts=5,
                      head_budget_seconds=3.26,
                      head_failing_since=datetime.now(UTC) - timedelta(seconds=30))  # fmt: skip
    head = head_failing_report(stats)
    assert head is not None
    assert (head["message_id"], head["attempts"], head["budget_attempts"]) == (42, 7, 5)
    assert head["budget_seconds"] == 3.3
    assert 29 <= head["seconds"] < 60
    assert head_failing_report(PumpStats()) is None
    line = status._head_failing_line({"stats": {"head_failing": head}})
    assert line == [f"failing:  head #42, 7 failed attempt(s) in {head['seconds']:.0f} s; "
                    "retry budget counted 5 attempt(s), 3 s while the store answered"]  # fmt: skip
    assert status._head_failing_line({"stats": {"head_failing": None}}) == []
    assert status._head_failing_line(None) == []

"""The adaptive polling settings (docs/design.md, "The pump's threads"): names, defaults
tuned for freshness, ranges, and that the runner's pump gets them."""

from __future__ import annotations

import logging

import pytest

from flightstate_core.domain.errors import ConfigError
from flightstate_core.memory import MemoryInbox, MemoryStore
from flightstate_runner.config import load_config
from flightstate_runner.metrics import RunnerMetrics
from flightstate_runner.wiring import Services, build_pump


def test_defaults_poll_fast_after_a_message_then_at_the_quiet_interval() -> None:
    config = load_config(None, {})
    assert config.poll_active_interval == 0.002
    assert config.poll_active_period == 2.0
    assert config.poll_quiet_interval == 0.05  # the inbox: 20 reads/s at most when quiet
    assert config.poll_interval == 0.5  # a standby's lease, the empty outbox


def test_environment_names_follow_the_convention() -> None:
    config = load_config(None, {"FLIGHTSTATE_POLL_ACTIVE_INTERVAL": "0.01",
                                "FLIGHTSTATE_POLL_ACTIVE_PERIOD": "0",
                                "FLIGHTSTATE_POLL_QUIET_INTERVAL": "0.2"})  # fmt: skip
    assert (config.poll_active_interval, config.poll_active_period,
            config.poll_quiet_interval) == (0.01, 0.0, 0.2)  # fmt: skip


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("poll_active_interval", "0"),
        ("poll_active_interval", "0.0001"),
        ("poll_active_interval", "nan"),
        ("poll_active_interval", "inf"),
        ("poll_active_period", "-1"),
        ("poll_active_period", "3601"),
        ("poll_active_period", "nan"),
        ("poll_active_period", "soon"),
        ("poll_quiet_interval", "0"),
        ("poll_quiet_interval", "0.0001"),
        ("poll_quiet_interval", "3601"),
        ("poll_quiet_interval", "nan"),
    ],
)
def test_out_of_range_values_are_refused_naming_the_setting(name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=f"^{name}: "):
        load_config(None, {f"FLIGHTSTATE_{name.upper()}": value})


def test_the_runner_pump_gets_the_polling_settings() -> None:
    config = load_config(None, {"FLIGHTSTATE_POLL_ACTIVE_INTERVAL": "0.02",
                                "FLIGHTSTATE_POLL_ACTIVE_PERIOD": "5",
                                "FLIGHTSTATE_POLL_QUIET_INTERVAL": "0.25",
                                "FLIGHTSTATE_POLL_INTERVAL": "3"})  # fmt: skip
    store = MemoryStore()
    services = Services(config, None, store, MemoryInbox(), store, None)  # type: ignore[arg-type]
    pump = build_pump(services, RunnerMetrics(), until_idle=True, log=logging.getLogger("t"))
    assert (pump.settings.active_poll, pump.settings.active_for) == (0.02, 5.0)
    assert pump.settings.idle_poll == 0.25
    assert pump.settings.standby_poll == 3.0


def test_backfill_interval_reaches_the_pump_settings() -> None:
    assert load_config(None, {}).backfill_interval == 0.1
    config = load_config(None, {"FLIGHTSTATE_BACKFILL_INTERVAL": "0"})
    assert config.backfill_interval == 0.0
    with pytest.raises(ConfigError, match=r"^backfill_interval: "):
        load_config(None, {"FLIGHTSTATE_BACKFILL_INTERVAL": "61"})


def test_the_read_ahead_gathers_by_default_and_the_setting_reaches_the_pump() -> None:
    store = MemoryStore()
    for environ, interval in (({}, 0.005), ({"FLIGHTSTATE_GATHER_INTERVAL": "0"}, 0.0),
                              ({"FLIGHTSTATE_GATHER_INTERVAL": "0.02"}, 0.02)):  # fmt: skip
        config = load_config(None, {**environ, "FLIGHTSTATE_BATCH_MAX_BYTES": str(2**21)})
        assert config.gather_interval == interval
        services = Services(config, None, store, MemoryInbox(), store, None)  # type: ignore[arg-type]
        pump = build_pump(services, RunnerMetrics(), until_idle=True, log=logging.getLogger("t"))
        assert pump.settings.gather_interval == interval
        assert pump.settings.gather_max_chars == 2**21  # the read budget bounds a gathered batch
        assert pump.settings.batch_max_records == 32_000  # and the decoded-record budget
    config = load_config(None, {"FLIGHTSTATE_BATCH_MAX_RECORDS": "5000"})
    services = Services(config, None, store, MemoryInbox(), store, None)  # type: ignore[arg-type]
    pump = build_pump(services, RunnerMetrics(), until_idle=True, log=logging.getLogger("t"))
    assert pump.settings.batch_max_records == 5000
    for bad in ("-0.001", "3601", "nan", "often"):
        with pytest.raises(ConfigError, match=r"^gather_interval: "):
            load_config(None, {"FLIGHTSTATE_GATHER_INTERVAL": bad})


@pytest.mark.parametrize(
    ("env", "expected"), [({}, 0.5), ({"FLIGHTSTATE_POLL_INTERVAL": "0.7"}, 0.7)]
)
def test_the_dispatcher_polls_an_empty_outbox_every_poll_interval(
    env: dict[str, str], expected: float
) -> None:  # fmt: skip
    """POLL_INTERVAL paces the empty outbox, the fallback to the wake-ups
    (docs/configuration.md); before this was wired the runner's dispatcher polled at the
    library default, 5 times a second."""
    pytest.importorskip("confluent_kafka")
    from flightstate_runner.wiring import kafka_settings  # noqa: PLC0415 - needs the extra

    assert kafka_settings(load_config(None, env), "127.0.0.1:9").idle_sleep_s == expected

"""The lab's generated traffic (``generate``, ``demo``) is today's airport day.

A fixed day fell behind the clock: four days after it, the pump's cleanup (retention three
days) removed the flights that had terminal evidence, and the demo reported fewer flights
than it created. These tests pin the day the traffic carries and what cleanup makes of it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from flightstate_core.domain.codec import decode
from flightstate_core.domain.messages import ScheduleMessage
from flightstate_core.domain.opday import operation_day
from flightstate_core.domain.state import FlightState, FlightStatus
from flightstate_core.domain.values import Set
from flightstate_core.engine.lifecycle import RetentionPolicy, cleanup_reason
from flightstate_runner.config import RunnerConfig
from flightstate_runner.inboxes import todays_traffic
from flightstate_testing.traffic import DEFAULT_DAY, generate_day


def _operation_days(raws: list[str], config: RunnerConfig) -> set[object]:
    """The operation days of the flights the opening DNLD packages create."""
    days = set()
    packages = [decode(raw.encode(), config.core()) for raw in raws[:2]]  # 25 flights each
    for message in packages:
        assert isinstance(message, ScheduleMessage)
        assert message.envelope.styp == "DNLD"
        for record in message.records:
            sodt = record.scalars["SODT"]
            assert isinstance(sodt, Set)
            days.add(operation_day(sodt, config.core()))
    assert len(days) > 0
    return days


def test_generated_traffic_operates_today_at_the_airport() -> None:
    config = RunnerConfig(airport_tz="Pacific/Kiritimati")  # UTC+14: its today is often not UTC's
    today = datetime.now(config.core().airport_tz).date()
    raws = todays_traffic(config, messages=40, flights=30, seed=3)
    assert _operation_days(raws, config) == {today}


def test_without_a_day_the_traffic_keeps_its_fixed_day_and_text() -> None:
    config = RunnerConfig()
    assert _operation_days(generate_day(3, flights=30, messages=40), config) == {DEFAULT_DAY}
    assert generate_day(3, flights=30, messages=40) == generate_day(3, flights=30, messages=40)


def test_cleanup_keeps_a_deleted_flight_of_today_and_removes_one_past_retention() -> None:
    config = RunnerConfig()
    policy = RetentionPolicy()
    now = datetime.now(config.core().airport_tz)

    def deleted_on(day: object) -> FlightState:
        return FlightState(flid="1", status=FlightStatus.DELETED, version=3,
                           operation_day=day, updated_at=now)  # fmt: skip

    assert cleanup_reason(deleted_on(now.date()), now, policy, config.core()) is None
    old = now.date() - policy.retention - timedelta(days=1)
    reason = cleanup_reason(deleted_on(old), now, policy, config.core())
    assert reason == "retention passed, deleted"

"""Lifecycle eligibility and schedule-request matching: the pure rules."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.messages import Envelope, FlightRecord, ScheduleMessage
from flightstate_core.domain.state import FlightState, FlightStatus
from flightstate_core.domain.values import Set
from flightstate_core.engine.lifecycle import (
    RetentionPolicy,
    cleanup_reason,
    plan_cleanup,
    removal_groups,
)
from flightstate_core.engine.requests import (
    RequestAction,
    format_sis_time,
    match_response,
    next_action,
    response_window,
    schedule_request_message,
)
from flightstate_core.ports import RequestStatus, ScheduleRequestRecord

CONFIG = CoreConfig()
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
POLICY = RetentionPolicy(
    retention=timedelta(days=3), quiet_period=timedelta(days=2), null_day_quiet=timedelta(days=14)
)


def flight(
    flid: str,
    day: date | None,
    *,
    updated: timedelta = timedelta(hours=1),
    status: FlightStatus = FlightStatus.ACTIVE,
    **scalars: str,
) -> FlightState:
    return FlightState(
        flid, status, 2, day, dict(scalars), created_at=NOW - updated, updated_at=NOW - updated
    )


OLD_DAY = date(2026, 11, 20)
RECENT_DAY = date(2026, 11, 29)


@pytest.mark.parametrize(
    ("state", "eligible"),
    [
        (flight("1", RECENT_DAY, ACTT="29NOV261000"), False),  # retention not passed
        (flight("2", OLD_DAY), False),  # retention passed, no evidence, not quiet
        (flight("3", OLD_DAY, ACTT="20NOV261000"), True),  # actual time
        (flight("4", OLD_DAY, CNCL="20NOV260900"), True),  # cancelled
        (flight("5", OLD_DAY, status=FlightStatus.DELETED), True),  # deleted
        (flight("6", OLD_DAY, updated=timedelta(days=3)), True),  # quiet long enough
        (flight("7", None, updated=timedelta(days=3)), False),  # no day: needs 14 days quiet
        (flight("8", None, updated=timedelta(days=15)), True),
        (flight("9", None, ACTT="20NOV261000"), False),  # no day: evidence alone is not enough
    ],
)
def test_cleanup_eligibility(state: FlightState, eligible: bool) -> None:
    assert (cleanup_reason(state, NOW, POLICY, CONFIG) is not None) is eligible


def test_terminal_status_is_configurable() -> None:
    state = flight("1", OLD_DAY, FTSS="ARR")
    assert cleanup_reason(state, NOW, POLICY, CONFIG) is None
    policy = RetentionPolicy(terminal_statuses=frozenset({"ARR"}))
    assert cleanup_reason(state, NOW, policy, CONFIG) == "retention passed, FTSS ARR"


def test_master_and_codeshares_leave_together_or_not_at_all() -> None:
    master = flight("M", OLD_DAY, ACTT="20NOV261000")
    ready_codeshare = flight("C1", OLD_DAY, MAID="M", CNCL="20NOV260900")
    busy_codeshare = flight("C2", OLD_DAY, MAID="M")  # not eligible
    flights = {f.flid: f for f in (master, ready_codeshare, busy_codeshare)}
    assert removal_groups(flights) == [("C1", "C2", "M")]
    plan = plan_cleanup(flights, NOW, POLICY, CONFIG)
    assert plan.remove == ()
    assert set(plan.kept) == {"M", "C1", "C2"}

    flights["C2"] = flight("C2", OLD_DAY, MAID="M", status=FlightStatus.DELETED)
    plan = plan_cleanup(flights, NOW, POLICY, CONFIG)
    assert set(plan.remove) == {"M", "C1", "C2"}
    # only flights not already deleted get a tombstone
    assert set(plan.tombstone) == {"M", "C1"}


def _request(
    rid: int, start: str, end: str, sent_minutes_ago: int, **kw: object
) -> ScheduleRequestRecord:
    values = {
        "request_id": rid,
        "window_start": datetime.fromisoformat(start),
        "window_end": datetime.fromisoformat(end),
        "seqn": rid,
        "sent_at": NOW - timedelta(minutes=sent_minutes_ago),
        "attempts": 1,
        "status": RequestStatus.OPEN,
    }
    values.update(kw)
    return ScheduleRequestRecord(**values)  # type: ignore[arg-type]


def _resp(*sodts: str) -> ScheduleMessage:
    env = Envelope("AODB", "1", "20261130120000", "SCHD", "RESP")
    records = tuple(FlightRecord(str(i), {"SODT": Set(s)}) for i, s in enumerate(sodts))
    return ScheduleMessage(env, len(records), records)


def test_response_matches_oldest_covering_open_request() -> None:
    day = _request(1, "2026-12-01T00:00+08:00", "2026-12-02T00:00+08:00", 30)
    wide = _request(2, "2026-11-30T00:00+08:00", "2026-12-05T00:00+08:00", 40)
    answered = _request(
        3, "2026-11-01T00:00+08:00", "2026-12-31T00:00+08:00", 90, status=RequestStatus.ANSWERED
    )
    window = response_window(_resp("01DEC260800", "01DEC262230"), CONFIG)
    assert window is not None
    # both open ones cover it; the older (sent 40 minutes ago) wins
    assert match_response([day, wide, answered], window) == wide
    outside = response_window(_resp("10DEC260800"), CONFIG)
    assert match_response([day, wide], outside) is None  # unsolicited


def test_resend_then_fail() -> None:
    timeout = timedelta(minutes=10)
    fresh = _request(1, "2026-12-01T00:00+08:00", "2026-12-02T00:00+08:00", 5)
    late = _request(2, "2026-12-01T00:00+08:00", "2026-12-02T00:00+08:00", 15)
    exhausted = _request(3, "2026-12-01T00:00+08:00", "2026-12-02T00:00+08:00", 15, attempts=3)
    assert next_action(fresh, NOW, timeout, 3) is RequestAction.WAIT
    assert next_action(late, NOW, timeout, 3) is RequestAction.RESEND
    assert next_action(exhausted, NOW, timeout, 3) is RequestAction.FAIL


def test_request_message_uses_airport_time() -> None:
    start = datetime(2026, 12, 1, 0, 0, tzinfo=UTC)  # 08:00 in Shanghai
    assert format_sis_time(start, CONFIG) == "01DEC260800"
    message = schedule_request_message("FSTA", 7, start, start + timedelta(days=1), NOW, CONFIG)
    envelope = message.envelope
    assert (envelope.type, envelope.styp, envelope.seqn) == ("RQFD", "NONE", "7")
    assert (message.stdb, message.stde) == ("01DEC260800", "02DEC260800")

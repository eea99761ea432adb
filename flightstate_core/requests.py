"""Schedule requests (RQFD) and the matching of SCHD RESP answers (spec §9).

The AODB answers a request with an ordinary inbox row of STYP RESP that carries no
request id. So a response is matched to the OLDEST open request whose window covers the
response's SODT range (the earliest and latest SODT of its flights). A response no
request covers is unsolicited: it is still applied, and counted.

An open request unanswered within ``timeout`` is sent again with a new SEQN, up to
``max_attempts`` sends in all; then it is marked FAILED and reported.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from enum import Enum

from attrs import frozen

from flightstate_core.config import CoreConfig
from flightstate_core.messages import Envelope, ScheduleMessage, ScheduleRequest
from flightstate_core.times import parse_time
from flightstate_core.values import Set

__all__ = [
    "RequestAction",
    "RequestStatus",
    "ScheduleRequestRecord",
    "format_sis_time",
    "match_response",
    "next_action",
    "response_window",
    "schedule_request_message",
]

_MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")


class RequestStatus(str, Enum):
    OPEN = "OPEN"
    ANSWERED = "ANSWERED"
    FAILED = "FAILED"


class RequestAction(str, Enum):
    WAIT = "WAIT"
    RESEND = "RESEND"
    FAIL = "FAIL"


@frozen
class ScheduleRequestRecord:
    """One outstanding or finished schedule request, as the store keeps it."""

    request_id: int
    window_start: datetime
    window_end: datetime
    seqn: int
    sent_at: datetime
    attempts: int
    status: RequestStatus
    answered_by: int | None = None  # inbox message id of the matching RESP


def format_sis_time(moment: datetime, config: CoreConfig) -> str:
    """An aware datetime as ``DDMONYYHHMM`` in the airport zone."""
    local = moment.astimezone(config.airport_tz)
    return f"{local.day:02d}{_MONTHS[local.month - 1]}{local.year % 100:02d}{local:%H%M}"


def schedule_request_message(  # noqa: PLR0917 - reads as the request it builds
    sndr: str, seqn: int, start: datetime, end: datetime, now: datetime, config: CoreConfig
) -> ScheduleRequest:
    """The RQFD message (TYPE=RQFD, STYP=NONE) asking for flights between start and end."""
    dttm = now.astimezone(config.airport_tz)
    envelope = Envelope(sndr, str(seqn), dttm.strftime("%Y%m%d%H%M%S"), "RQFD", "NONE", dttm)
    return ScheduleRequest(envelope, format_sis_time(start, config), format_sis_time(end, config))


def response_window(
    message: ScheduleMessage, config: CoreConfig
) -> tuple[datetime, datetime] | None:
    """Earliest and latest SODT of a response's flights (None when none carries SODT)."""
    times = []
    for record in message.records:
        sodt = record.scalars.get("SODT")
        if isinstance(sodt, Set):
            times.append(parse_time(sodt.raw, config.airport_tz, config.century_pivot))
    return (min(times), max(times)) if times else None


def match_response(
    open_requests: Iterable[ScheduleRequestRecord], window: tuple[datetime, datetime] | None
) -> ScheduleRequestRecord | None:
    """The oldest open request whose window covers the response's SODT range.

    A response without any SODT (an empty package) answers the oldest open request.
    """
    candidates: Sequence[ScheduleRequestRecord] = sorted(
        (r for r in open_requests if r.status is RequestStatus.OPEN),
        key=lambda r: (r.sent_at, r.request_id),
    )
    for request in candidates:
        if window is None:
            return request
        if request.window_start <= window[0] and window[1] <= request.window_end:
            return request
    return None


def next_action(
    request: ScheduleRequestRecord, now: datetime, timeout: timedelta, max_attempts: int
) -> RequestAction:
    """What to do with an open request now: wait, send it again, or give up."""
    if request.status is not RequestStatus.OPEN or now - request.sent_at < timeout:
        return RequestAction.WAIT
    return RequestAction.RESEND if request.attempts < max_attempts else RequestAction.FAIL

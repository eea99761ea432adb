"""Schedule requests (RQFD) and the matching of SCHD RESP answers (docs/protocol.md §9).

The AODB answers a request with an ordinary inbox row of STYP RESP that carries no
request id. So a response is matched to the OLDEST open request whose window covers the
response's SODT range (the earliest and latest SODT of its flights). A response no
request covers is unsolicited: it is still applied, and counted.

An open request unanswered within ``timeout`` is sent again with a new SEQN, up to
``max_attempts`` sends in all; then it is marked FAILED and reported.

The backends (``flightstate_pg.requests``, ``flightstate_oracle.requests``) only say this
in SQL. What they share is here: matching one applied RESP against the response log
(``match_logged`` over the small ``ResponseLog`` port), the RQFD text, the window of a RESP
read again from the inbox, the loops and the reports.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from enum import Enum
from typing import Final, TypeGuard

import attrs

from flightstate_core.domain.codec import decode, encode
from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.errors import ProtocolError
from flightstate_core.domain.messages import Envelope, Message, ScheduleMessage, ScheduleRequest
from flightstate_core.domain.records import ProcessedMessage
from flightstate_core.domain.times import parse_time
from flightstate_core.domain.values import Set
from flightstate_core.ports import (
    Inbox,
    ReconcileReport,
    RequestStatus,
    RequestStatusReport,
    ResponseLog,
    ScheduleRequestRecord,
    ScheduleResponses,
    StateTransaction,
    Window,
)

__all__ = [
    "ROUTING_RQFD",
    "ReconcileReport",
    "RequestAction",
    "RequestStatusReport",
    "applied_response",
    "count_actions",
    "format_sis_time",
    "match_logged",
    "match_response",
    "next_action",
    "reconcile_each",
    "require_response",
    "response_window",
    "rqfd_text",
    "schedule_request_message",
    "schedule_response_hook",
    "window_from_inbox",
]

#: coutmsgs ROUTINGID of a daily-schedule request.
ROUTING_RQFD: Final = "VIEWRQFD"

_MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")


class RequestAction(str, Enum):
    WAIT = "WAIT"
    RESEND = "RESEND"
    FAIL = "FAIL"


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


# --------------------------------------------------------------------------- sending


def rqfd_text(
    sndr: str, seqn: int, window: tuple[datetime, datetime], *, now: datetime, config: CoreConfig
) -> str:
    """The encoded RQFD asking for flights in ``window`` (what ``Outbound.send`` takes)."""
    message = schedule_request_message(sndr, seqn, window[0], window[1], now, config)
    return encode(message).decode("utf-8")


def count_actions(
    request_ids: Iterable[int], act: Callable[[int], RequestAction]
) -> tuple[int, int]:
    """Run ``act`` (one backend transaction) on each due request; (resent, failed)."""
    resent = failed = 0
    for request_id in request_ids:
        action = act(request_id)
        resent += action is RequestAction.RESEND
        failed += action is RequestAction.FAIL
    return resent, failed


# --------------------------------------------------------------------------- matching


def match_logged(
    log: ResponseLog, message_id: int, window: Window, *, as_of: datetime | None,
    now: datetime | None,
) -> int | None:  # fmt: skip
    """Match one applied RESP: the REQUEST_ID it answers, or None (unsolicited).

    Idempotent: a logged message keeps its first match. With ``as_of``, requests are judged
    as they were then (a request FAILED since counts as OPEN: a late answer turns it
    ANSWERED)."""
    found, request_id = log.logged(message_id)
    if found:
        return request_id
    candidates = log.open_requests(as_of)
    if as_of is not None:
        candidates = [attrs.evolve(r, status=RequestStatus.OPEN) for r in candidates]
    chosen = match_response(candidates, window)
    request_id = None if chosen is None else chosen.request_id
    if log.log(message_id, request_id, window, now):
        if request_id is not None:
            log.answer(request_id, message_id, now)
        return request_id
    return log.logged(message_id)[1]  # a concurrent match won


def require_response(message: ScheduleMessage, message_id: int) -> None:
    """Raise ValueError unless ``message`` is a SCHD RESP."""
    if message.envelope.type != "SCHD" or message.envelope.styp != "RESP":
        raise ValueError(f"message {message_id} is not a SCHD RESP")


def applied_response(message: Message, processed: ProcessedMessage) -> TypeGuard[ScheduleMessage]:
    """Whether an after-save hook should match this message: a SUCCEEDED SCHD RESP."""
    return (
        isinstance(message, ScheduleMessage)
        and message.envelope.styp == "RESP"
        and processed.proc.status is Outcome.SUCCEEDED
    )


def window_from_inbox(
    inbox: Inbox | None, message_id: int, config: CoreConfig
) -> tuple[bool, Window]:
    """(found, window) of an applied RESP from its inbox row's raw text (decoded again);
    found is False when there is no inbox, the row is gone, or it no longer decodes."""
    if inbox is None:
        return False, None
    rows = inbox.read_after(message_id - 1, 1)
    if not rows or rows[0].message_id != message_id:
        return False, None
    try:
        message = decode(rows[0].raw, config)
    except ProtocolError:
        return False, None
    if not isinstance(message, ScheduleMessage):
        return False, None
    return True, response_window(message, config)


# --------------------------------------------------------------------------- reports


def reconcile_each(
    pending: Iterable[tuple[int, datetime]], match: Callable[[int, datetime], int | None]
) -> ReconcileReport:
    """Run ``match(message_id, processed_at)`` (one backend transaction) on each pending
    RESP in order and count the answered and unsolicited ones."""
    answered = unsolicited = 0
    for message_id, processed_at in pending:
        matched = match(message_id, processed_at)
        answered += matched is not None
        unsolicited += matched is None
    return ReconcileReport(answered, unsolicited)


def schedule_response_hook(
    config: CoreConfig,
) -> Callable[[StateTransaction, Message, ProcessedMessage], None]:
    """An after-save hook for the unit of work: matches a SUCCEEDED SCHD RESP inside the
    transaction that applied it (as ``match_logged`` with the requests open now); every
    other message, and a store without ``ScheduleResponses``, passes untouched."""

    def hook(tx: StateTransaction, message: Message, processed: ProcessedMessage) -> None:
        if applied_response(message, processed) and isinstance(tx, ScheduleResponses):
            window = response_window(message, config)
            match_logged(tx.response_log(), processed.proc.message_id, window, as_of=None,
                         now=processed.proc.processed_at)  # fmt: skip

    return hook

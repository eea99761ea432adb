"""Schedule requests (RQFD) as the stores keep them, and where outbound SIS messages go
(docs/protocol.md §9; the shared logic is ``flightstate_core.engine.requests``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from enum import Enum
from typing import Any, Protocol, TypeAlias

from attrs import frozen

__all__ = [
    "Outbound",
    "ReconcileReport",
    "RequestStatus",
    "RequestStatusReport",
    "ResponseLog",
    "ScheduleRequestRecord",
    "Window",
]

#: The SODT range of a response (earliest, latest), None when no flight carries SODT.
Window: TypeAlias = tuple[datetime, datetime] | None


class RequestStatus(str, Enum):
    OPEN = "OPEN"
    ANSWERED = "ANSWERED"
    FAILED = "FAILED"


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


class Outbound(Protocol):
    """Where outbound SIS messages go (``flightstate_mysql.outbound.MySqlOutbound``)."""

    def send(self, raw: str, routing_id: str, *, at: datetime) -> int:
        """Insert one message for the transport; return its row id once committed."""


class ResponseLog(Protocol):
    """SCHD_RESPONSE_LOG and SCHD_REQUEST inside one open transaction of a backend."""

    def logged(self, message_id: int) -> tuple[bool, int | None]:
        """(whether this message is logged, the REQUEST_ID it was matched to)."""

    def open_requests(self, as_of: datetime | None) -> list[ScheduleRequestRecord]:
        """Requests open now (None), or open when a RESP was applied at ``as_of`` (created
        before it, not answered/failed before it); locked FOR UPDATE."""

    def log(self, message_id: int, request_id: int | None, window: Window,
            now: datetime | None) -> bool:  # fmt: skip
        """Insert the log row; False if it was there already (a concurrent match won)."""

    def answer(self, request_id: int, message_id: int, now: datetime | None) -> None:
        """Mark the request ANSWERED by this message (clears FAILED_AT)."""


@frozen
class ReconcileReport:
    """Applied RESP messages matched by one ``reconcile_responses`` call."""

    answered: int = 0
    unsolicited: int = 0


@frozen
class RequestStatusReport:
    """Counts by status, unsolicited responses, and the open/failed requests (newest first)."""

    open: int
    answered: int
    failed: int
    unsolicited: int
    requests: tuple[ScheduleRequestRecord, ...]

    @classmethod
    def of(
        cls, counts: Mapping[str, int], unsolicited: int,
        requests: Iterable[ScheduleRequestRecord],
    ) -> RequestStatusReport:  # fmt: skip
        """The report from request counts keyed by STATUS (missing statuses count 0)."""
        return cls(
            counts.get(RequestStatus.OPEN.value, 0), counts.get(RequestStatus.ANSWERED.value, 0),
            counts.get(RequestStatus.FAILED.value, 0), unsolicited, tuple(requests),
        )  # fmt: skip

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view for the runner's ``status``."""
        return {
            "open": self.open, "answered": self.answered, "failed": self.failed,
            "unsolicited": self.unsolicited,
            "requests": [
                {"requestId": r.request_id, "status": r.status.value, "seqn": r.seqn,
                 "attempts": r.attempts, "windowStart": r.window_start.isoformat(),
                 "windowEnd": r.window_end.isoformat(), "sentAt": r.sent_at.isoformat()}
                for r in self.requests
            ],
        }  # fmt: skip

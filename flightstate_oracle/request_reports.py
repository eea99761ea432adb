"""Reports of the schedule-request functions (pure; same shape as ``flightstate_pg.requests``).

Why a copy and not an import: ``flightstate_pg`` needs psycopg, which an Oracle site does not
install. These belong in ``flightstate_core`` (with ``CleanupReport``); until they move
there, both backends keep the same fields and ``as_dict`` keys.
"""

from __future__ import annotations

from typing import Any

from attrs import frozen

from flightstate_core.requests import ScheduleRequestRecord

__all__ = ["ReconcileReport", "RequestStatusReport"]


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

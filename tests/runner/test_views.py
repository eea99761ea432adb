"""The text views of the operator commands, from the documents their --json prints."""

from __future__ import annotations

from flightstate_runner.views import render_requests

_REPORT = {
    "open": 1, "answered": 2, "failed": 0, "unsolicited": 3,
    "matched": {"answered": 1, "unsolicited": 0},
    "requests": [
        {"requestId": 7, "status": "OPEN", "seqn": 12, "attempts": 2,
         "windowStart": "2026-12-05T00:00:00+08:00", "windowEnd": "2026-12-06T00:00:00+08:00",
         "sentAt": "2026-12-05T08:00:00+00:00"},
    ],
}  # fmt: skip


def test_requests_text_has_the_counts_a_header_and_a_line_per_request() -> None:
    lines = render_requests(_REPORT).splitlines()
    assert lines[0] == "requests: 1 open, 2 answered, 0 failed; 3 unsolicited response(s)"
    assert lines[1] == "matched now: 1 answered, 0 unsolicited"
    assert lines[2].split() == ["id", "status", "SEQN", "tries", "window", "sent"]
    assert lines[3].split() == [
        "7", "OPEN", "12", "2", "2026-12-05T00:00:00+08:00", "..", "2026-12-06T00:00:00+08:00",
        "2026-12-05T08:00:00+00:00",
    ]  # fmt: skip
    assert len(lines) == 4


def test_no_request_no_header() -> None:
    empty = {**_REPORT, "requests": []}
    assert len(render_requests(empty).splitlines()) == 2

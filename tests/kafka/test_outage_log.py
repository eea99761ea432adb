"""A broker outage is one line at its start, summaries at a bounded rate, one line
at its end (clock injected)."""

from __future__ import annotations

import logging

import pytest

from flightstate_kafka._outage import OutageLog


def test_outage_lines(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    outage = OutageLog(logging.getLogger("t.outage"), every_s=10, clock=lambda: now[0])
    outage.recovered()  # no outage: nothing
    with caplog.at_level(logging.WARNING, "t.outage"):
        for _ in range(95):  # ~9 failures a second for ~10.5 s
            outage.failed("connection refused")
            now[0] += 0.11
        assert outage.down
        outage.recovered()
        outage.recovered()
    events = [record.__dict__.get("event") for record in caplog.records]
    assert events == ["kafka_outage_start", "kafka_outage", "kafka_outage_end"]
    assert "95 failures" in caplog.records[-1].getMessage()
    assert not outage.down

"""The metrics endpoint binds loopback unless told otherwise (docs/design.md, "Poison-proof
bounds")."""

from __future__ import annotations

import urllib.request

from flightstate_runner.metrics import RunnerMetrics


def test_metrics_bind_loopback_by_default() -> None:
    metrics = RunnerMetrics()
    host, port = metrics.serve(0)
    try:
        assert host == "127.0.0.1"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
            assert b"flightstate_messages" in reply.read()
    finally:
        metrics.close()


def test_metrics_bind_the_configured_address() -> None:
    metrics = RunnerMetrics()
    host, _ = metrics.serve(0, "0.0.0.0")  # noqa: S104 - the option under test
    try:
        assert host == "0.0.0.0"  # noqa: S104
    finally:
        metrics.close()

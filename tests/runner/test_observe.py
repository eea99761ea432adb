"""The runner's per-message metrics: DEAD messages are counted by a bounded reason class."""

from __future__ import annotations

import logging

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.records import InboxRow
from flightstate_core.engine.processor import ServiceProcessor
from flightstate_core.memory import MemoryStore
from flightstate_runner.metrics import RunnerMetrics, dead_reason
from flightstate_runner.observe import ObservedProcessor
from flightstate_testing.traffic import TrafficGenerator


def test_dead_reason_class_drops_values_and_positions() -> None:
    assert dead_reason("/MSG/FLOP[1]/FDIV/@DDIR: 'SIDEWAYS' is not one of FROM, TO") == (
        "/MSG/FLOP/FDIV/@DDIR"
    )
    assert dead_reason("/MSG/FLOP[2]/FDIV/@DDIR: 'UP' is not one of FROM, TO") == (
        "/MSG/FLOP/FDIV/@DDIR"
    )
    assert dead_reason("KeyError: 'x'") == "KeyError"
    assert dead_reason(None) == "unknown"


def test_dead_messages_are_counted_by_reason_class() -> None:
    gen = TrafficGenerator(seed=5)
    rows = [
        gen.schedule("DNLD", [1]),
        gen.envelope("XXXX", "NONE", "<RECS>0</RECS>"),
        gen.envelope("YYYY", "NONE", "<RECS>0</RECS>"),
        "<MSG><unclosed>",
    ]
    metrics = RunnerMetrics()
    processor = ObservedProcessor(ServiceProcessor(MemoryStore(), CoreConfig()), metrics,
                                  logging.getLogger("test.observe"))  # fmt: skip
    processor.process_batch([InboxRow(n, raw) for n, raw in enumerate(rows, 1)], None)

    def dead(reason: str) -> float | None:
        return metrics.registry.get_sample_value("flightstate_dead_messages_total",
                                                 {"reason": reason})  # fmt: skip

    assert dead("/MSG/META/TYPE") == 2  # two unknown TYPEs, one class
    assert dead("/") == 1  # not well-formed
    total = metrics.registry.get_sample_value("flightstate_messages_total", {"outcome": "DEAD"})
    assert total == 3

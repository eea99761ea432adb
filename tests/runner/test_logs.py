"""The runner's log lines: a batch's message lines leave in one write, none lost or reordered."""

from __future__ import annotations

import io
import json
import logging
import threading
from collections.abc import Iterator

import pytest

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.records import InboxRow
from flightstate_core.engine.processor import ServiceProcessor
from flightstate_core.memory import MemoryStore
from flightstate_runner.logs import (
    BatchingStreamHandler,
    JsonFormatter,
    configure_logging,
    lines_held,
)
from flightstate_runner.metrics import RunnerMetrics
from flightstate_runner.observe import ObservedProcessor
from flightstate_testing.traffic import TrafficGenerator


class CountingStream(io.StringIO):
    """A text stream that counts the writes it gets."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, text: str) -> int:
        self.writes += 1
        return super().write(text)


@pytest.fixture
def root() -> Iterator[logging.Logger]:
    """The root logger, its handlers and level restored afterwards."""
    logger = logging.getLogger()
    saved, level = logger.handlers[:], logger.level
    try:
        yield logger
    finally:
        logger.handlers[:] = saved
        logger.setLevel(level)


@pytest.fixture
def stream(root: logging.Logger) -> CountingStream:
    """The root logger writing JSON lines to a counting stream."""
    out = CountingStream()
    handler = BatchingStreamHandler(out)
    handler.setFormatter(JsonFormatter())
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    return out


def lines(out: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_lines_held_are_written_once_in_order_when_the_block_ends(stream: CountingStream) -> None:
    log = logging.getLogger("test.logs")
    with lines_held():
        for n in range(5):
            log.info("line %d", n, extra={"n": n})
        assert stream.getvalue() == ""  # nothing written while held
    assert stream.writes == 1
    assert [line["n"] for line in lines(stream)] == [0, 1, 2, 3, 4]
    log.info("after")  # outside a block: written at once
    assert stream.writes == 2
    assert lines(stream)[-1]["msg"] == "after"


def test_a_block_that_raises_still_writes_its_lines(stream: CountingStream) -> None:
    log = logging.getLogger("test.logs")

    def fail_while_held() -> None:
        with lines_held():
            log.info("before the error")
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        fail_while_held()
    assert [line["msg"] for line in lines(stream)] == ["before the error"]


def test_a_nested_block_joins_the_outer_one(stream: CountingStream) -> None:
    log = logging.getLogger("test.logs")
    with lines_held():
        log.info("outer")
        with lines_held():
            log.info("inner")
        assert stream.getvalue() == ""  # the inner block's end writes nothing yet
    assert [line["msg"] for line in lines(stream)] == ["outer", "inner"]
    assert stream.writes == 1


def test_other_threads_are_not_held(stream: CountingStream) -> None:
    log = logging.getLogger("test.logs")
    with lines_held():
        log.info("held")
        worker = threading.Thread(target=log.info, args=("from another thread",))
        worker.start()
        worker.join()
        assert [line["msg"] for line in lines(stream)] == ["from another thread"]
    assert [line["msg"] for line in lines(stream)] == ["from another thread", "held"]


def test_a_line_that_cannot_be_formatted_is_reported_and_the_rest_written(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = CountingStream()
    handler = BatchingStreamHandler(out)
    log = logging.getLogger("test.logs.unformattable")
    log.propagate = False  # only this handler (pytest's own raises on a bad format)
    log.addHandler(handler)
    try:
        with handler.held():
            log.warning("first")
            log.warning("bad %d", "not a number")  # logging reports it on stderr
            log.warning("last")
    finally:
        log.removeHandler(handler)
    assert out.getvalue().splitlines() == ["first", "last"]
    assert "not a number" in capsys.readouterr().err


def test_a_batch_of_message_lines_is_one_write(stream: CountingStream) -> None:
    gen = TrafficGenerator(seed=3)
    rows = [
        InboxRow(n, raw)
        for n, raw in enumerate(
            [gen.schedule("DNLD", [1]), gen.schedule("DNLD", [2]), "<MSG><unclosed>"], 1
        )
    ]
    processor = ObservedProcessor(ServiceProcessor(MemoryStore(), CoreConfig()),
                                  RunnerMetrics(), logging.getLogger("test.observe"))  # fmt: skip
    results = processor.process_batch(rows, None)
    found = lines(stream)
    assert stream.writes == 1
    assert [line["message_id"] for line in found] == [1, 2, 3]
    assert [line["outcome"] for line in found] == [r.proc.status.value for r in results]
    assert found[-1]["level"] == "WARNING"  # the DEAD one


def test_configure_logging_installs_the_batching_handler(root: logging.Logger) -> None:
    configure_logging("INFO", json_lines=False)
    assert len(root.handlers) == 1
    assert isinstance(root.handlers[0], BatchingStreamHandler)

"""The gathering read-ahead (docs/design.md, "The pump's threads"): while a batch is
applied, rows that arrive are read and decoded into the next batch, up to its row and text
limits; nothing read is lost when a later read fails, and with no interval it reads once, as
before."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from flightstate_core.domain.errors import TransientError
from flightstate_core.domain.records import InboxRow
from flightstate_core.engine.outcome import PreparedRows, join_prepared
from flightstate_core.memory import MemoryInbox
from flightstate_core.pump.fifo import ReadAhead

WAIT_S = 10.0  # a bound for a broken test, never reached by a passing one


class ArrivingInbox(MemoryInbox):
    """A memory inbox that rows may be added to while the read-ahead's thread reads it;
    each read is recorded (cursor, limit, ids returned) and announced."""

    def __init__(self, rows: int, *, text: str = "x") -> None:
        super().__init__()
        self._lock = threading.Lock()
        self.text = text
        self.reads: list[tuple[int, int, list[int]]] = []
        self.read_done = threading.Condition(self._lock)
        self.fail_from: int | None = None  # reads from this number on raise
        self._go_on = threading.Event()  # reads after the first wait for it (see arrive)
        self.add(rows)

    def add(self, count: int) -> None:
        with self._lock:
            for _ in range(count):
                self.append(self.text)

    def arrive(self, count: int) -> None:
        """Add *count* rows while the apply runs: the reads after the first wait until
        they are in, so the test does not race the read-ahead's thread."""
        self.add(count)
        self._go_on.set()

    def read_after(self, cursor: int, limit: int) -> list[InboxRow]:
        if self.reads:
            assert self._go_on.wait(WAIT_S)
        with self._lock:
            if self.fail_from is not None and len(self.reads) + 1 >= self.fail_from:
                self.reads.append((cursor, limit, []))
                self.read_done.notify_all()
                raise TransientError("inbox unreachable")
            rows = super().read_after(cursor, limit)
            self.reads.append((cursor, limit, [row.message_id for row in rows]))
            self.read_done.notify_all()
            return rows

    def await_reads(self, count: int) -> None:
        with self._lock:
            assert self.read_done.wait_for(lambda: len(self.reads) >= count, WAIT_S), self.reads


def _prepare(rows: Sequence[InboxRow]) -> Sequence[InboxRow]:
    """A decode stand-in: every row 'decoded' to its own id (what the read-ahead carries)."""
    decoded: dict[int, Any] = {row.message_id: (row.raw, row.message_id) for row in rows}
    return PreparedRows(rows, decoded)


def _ids(rows: Sequence[InboxRow] | None) -> list[int]:
    assert rows is not None
    return [row.message_id for row in rows]


def test_rows_arriving_during_the_apply_join_the_next_batch_decoded() -> None:
    inbox = ArrivingInbox(3)
    ahead = ReadAhead(inbox, 100, _prepare, gather_every=0.001)
    try:
        ahead.start(0)
        inbox.await_reads(1)  # the read at the start of the apply: rows 1-3
        inbox.arrive(2)  # while the apply runs
        inbox.await_reads(3)  # a gathering read has seen them, the next one found nothing
        with inbox.read_done:  # and that ended the gathering
            assert not inbox.read_done.wait_for(lambda: len(inbox.reads) > 3, 0.05)
        rows = ahead.take(0)
    finally:
        ahead.close()
    assert _ids(rows) == [1, 2, 3, 4, 5]
    assert isinstance(rows, PreparedRows)
    assert rows.decoded == {i: ("x", i) for i in range(1, 6)}  # every chunk's decodes kept
    assert inbox.reads[0] == (0, 100, [1, 2, 3])
    assert inbox.reads[1:] == [(3, 97, [4, 5]), (5, 95, [])]  # after the last row, room left
    assert ahead.gathered_reads == 2


def test_nothing_arriving_ends_the_gathering_at_once() -> None:
    """At a few messages per second the read at the start of the apply finds nothing: no
    read follows it during that apply (the loop reads after it, as without gathering)."""
    inbox = ArrivingInbox(0)
    ahead = ReadAhead(inbox, 100, _prepare, gather_every=0.001)
    try:
        ahead.start(0)
        inbox.await_reads(1)
        inbox.arrive(1)
        with inbox.read_done:
            assert not inbox.read_done.wait_for(lambda: len(inbox.reads) > 1, 0.05)
        rows = ahead.take(0)
    finally:
        ahead.close()
    assert _ids(rows) == []
    assert ahead.gathered_reads == 0


def test_without_an_interval_the_next_batch_is_read_once() -> None:
    inbox = ArrivingInbox(3)
    ahead = ReadAhead(inbox, 100, _prepare)
    try:
        ahead.start(0)
        inbox.await_reads(1)
        inbox.arrive(2)
        rows = ahead.take(0)
    finally:
        ahead.close()
    assert _ids(rows) == [1, 2, 3]  # rows 4-5 wait for the next read
    assert len(inbox.reads) == 1
    assert ahead.gathered_reads == 0


def test_gathering_stops_at_the_batch_size() -> None:
    inbox = ArrivingInbox(3)
    ahead = ReadAhead(inbox, 4, _prepare, gather_every=0.001)
    try:
        ahead.start(0)
        inbox.await_reads(1)
        inbox.arrive(3)
        inbox.await_reads(2)
        with inbox.read_done:  # a full batch reads no more, however long the apply takes
            assert not inbox.read_done.wait_for(lambda: len(inbox.reads) > 2, 0.05)
        rows = ahead.take(0)
    finally:
        ahead.close()
    assert _ids(rows) == [1, 2, 3, 4]
    assert inbox.reads[1] == (3, 1, [4])  # it asked only for the room left


def test_gathering_stops_once_the_text_reaches_its_bound() -> None:
    inbox = ArrivingInbox(2, text="y" * 100)
    ahead = ReadAhead(inbox, 100, _prepare, gather_every=0.001, max_chars=150)
    try:
        ahead.start(0)
        inbox.await_reads(1)
        inbox.arrive(5)
        with inbox.read_done:
            assert not inbox.read_done.wait_for(lambda: len(inbox.reads) > 1, 0.05)
        rows = ahead.take(0)
    finally:
        ahead.close()
    assert _ids(rows) == [1, 2]  # 200 characters already: the rest waits for the next batch


def test_a_failing_gathering_read_keeps_what_was_read() -> None:
    inbox = ArrivingInbox(3)
    ahead = ReadAhead(inbox, 100, _prepare, gather_every=0.001)
    try:
        ahead.start(0)
        inbox.await_reads(1)
        inbox.fail_from = 2
        inbox.arrive(2)
        inbox.await_reads(2)  # the failing read
        rows = ahead.take(0)
    finally:
        ahead.close()
    assert _ids(rows) == [1, 2, 3]  # rows 4-5 are not lost: the loop reads after row 3
    inbox.fail_from = None
    assert [row.message_id for row in inbox.read_after(3, 100)] == [4, 5]


def test_a_failing_first_read_leaves_the_read_to_the_loop() -> None:
    inbox = ArrivingInbox(3)
    inbox.fail_from = 1
    ahead = ReadAhead(inbox, 100, _prepare, gather_every=0.001)
    try:
        ahead.start(0)
        inbox.await_reads(1)
        assert ahead.take(0) is None  # the loop reads itself, with its retry and counting
    finally:
        ahead.close()


def test_a_read_for_another_cursor_is_not_used() -> None:
    inbox = ArrivingInbox(3)
    ahead = ReadAhead(inbox, 100, _prepare, gather_every=0.001)
    try:
        ahead.start(0)
        inbox.await_reads(1)
        inbox.arrive(0)  # nothing new: a gathering read (if any) finds nothing and ends
        assert ahead.take(2) is None
    finally:
        ahead.close()


def test_joined_chunks_keep_every_decode_and_plain_rows_stay_undecoded() -> None:
    first = _prepare([InboxRow(1, "a", None), InboxRow(2, "b", None)])
    plain = [InboxRow(3, "c", None)]
    second = _prepare([InboxRow(4, "d", None)])
    joined = join_prepared([first, plain, second])
    assert _ids(joined) == [1, 2, 3, 4]
    assert isinstance(joined, PreparedRows)
    assert sorted(joined.decoded) == [1, 2, 4]  # row 3 is decoded by process_batch itself
    assert join_prepared([first]) is first

"""Strict FIFO apply: the head message ends SUCCEEDED, DUPLICATE, IGNORED or DEAD before the
next one is applied (docs/design.md, "One message, one transaction").

A batch goes in one transaction; if it fails, a prefix may have committed, so the rows are
retried one by one (committed ones are replays). Transient errors retry the head with capped
exponential back-off until its retry budget is spent (``pump_budget``: only failures while
the store answers its health probe count; without a probe, for ever), then it is recorded
DEAD naming the error; an unexpected error is retried ``unexpected_attempts`` times, then
the head is recorded DEAD with the error text. Nothing is ever skipped. With
``pipelined``, ``ReadAhead`` reads (and decodes) the next batch while this one is applied.
Either way a batch is decoded only up to ``batch_max_records`` flight records
(``flightstate_core.engine.budget.prepare_within``): text bytes alone do not bound it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, TypeVar

from flightstate_core.domain.errors import LeadershipLost, TransientError
from flightstate_core.domain.records import InboxRow, ProcessedMessage
from flightstate_core.engine.budget import prepare_within
from flightstate_core.engine.outcome import join_prepared
from flightstate_core.ports import Inbox, StoreHealth
from flightstate_core.pump.backfill import Backfill
from flightstate_core.pump.control import PumpControl, Stopped
from flightstate_core.pump.leadership import Leadership
from flightstate_core.pump.retry_budget import HeadBudget

if TYPE_CHECKING:  # the port lives with the pump; only its type is needed here
    from flightstate_core.ports import MessageProcessor

__all__ = ["FifoApply", "ReadAhead"]

_T = TypeVar("_T")


class FifoApply:
    """Reads after the cursor and finishes rows in order (see the module docstring)."""

    def __init__(
        self,
        *,
        processor: MessageProcessor,
        inbox: Inbox,
        control: PumpControl,
        leadership: Leadership,
        backfill: Backfill,
        after_commit: Callable[[Sequence[int]], None] | None,
        health: StoreHealth | None = None,
    ) -> None:
        self._processor = processor
        self._health = health
        self._inbox = inbox
        self._control = control
        self._leadership = leadership
        self._backfill = backfill
        self._after_commit = after_commit

    def read_ahead(self) -> ReadAhead | None:
        """A read-ahead for this leadership term (with ``pipelined``), else None."""
        if not self._control.settings.pipelined:
            return None
        settings = self._control.settings
        return ReadAhead(self._inbox, settings.batch_size, self._processor.prepare,
                         gather_every=settings.gather_interval,
                         max_chars=settings.gather_max_chars,
                         max_records=settings.batch_max_records)  # fmt: skip

    def next_rows(self, cursor: int, epoch: int, ahead: ReadAhead | None) -> Sequence[InboxRow]:
        """The batch after *cursor*: read ahead if that read was for this cursor, else now."""
        rows = None if ahead is None else ahead.take(cursor)
        if rows is not None:
            return rows
        limit = self._control.settings.batch_size
        rows = self.retry_transient(lambda: self._inbox.read_after(cursor, limit), epoch)
        if not rows:
            return rows
        try:  # decoded here within the record budget; process_batch uses the decodes
            return prepare_within(rows, self._processor.prepare,
                                  self._control.settings.batch_max_records)[0]  # fmt: skip
        except Exception:  # process_batch decodes (and reports) them itself
            return rows

    def apply(self, rows: Sequence[InboxRow], epoch: int) -> int:
        """Finish *rows* in FIFO order (or until stopped); return the new cursor."""
        control = self._control
        if len(rows) > 1:
            try:
                results = self._processor.process_batch(rows, epoch)
            except LeadershipLost:
                raise
            except Exception as exc:  # a prefix may have committed: go one by one
                control.note_error(exc)
            else:
                self._finished(rows, results)
                return rows[-1].message_id
        for row in rows:
            if control.stopping:
                break
            try:
                result = self._finish_head(row, epoch)
            except Stopped:
                break
            self._finished([row], [] if result is None else [result])
            self._leadership.renew_if_due(epoch)
        return control.stats.cursor or 0

    def retry_transient(self, call: Callable[[], _T], epoch: int) -> _T:
        """*call* until it does not raise ``TransientError`` (back-off between tries);
        ``Stopped`` once a stop is requested, or, for a pump that stops when idle, once
        it has failed for ``idle_backfill_wait`` s (``stats.left_behind`` says why: an
        unreachable inbox must not keep ``run --until-idle`` alive for ever)."""
        control = self._control
        attempt = 0
        failing_since: float | None = None
        while True:
            control.raise_if_stopping()
            try:
                return call()
            except TransientError as exc:
                attempt += 1
                control.stats.transient_errors += 1
                control.note_error(exc)
                now = control.monotonic()
                failing_since = now if failing_since is None else failing_since
                self._give_up_when_idle(now - failing_since, exc)
                control.wait(control.settings.retry.delay(attempt))
            self._leadership.renew_if_due(epoch)

    def _give_up_when_idle(self, failing_for: float, exc: TransientError) -> None:
        settings = self._control.settings
        limit = settings.idle_backfill_wait
        if settings.stop_when_idle and limit is not None and failing_for >= limit:
            self._control.stats.left_behind = f"failing for {limit:g} s: {exc}"
            raise Stopped

    def _finish_head(self, head: InboxRow, epoch: int) -> ProcessedMessage | None:
        """Retry the head until it is finished: transient errors with back-off until the
        retry budget is spent (for ever without one), anything else
        ``unexpected_attempts`` times; then DEAD with the error text."""
        control, stats = self._control, self._control.stats
        settings = control.settings
        budget = HeadBudget(settings, self._health, control.monotonic)
        transient = unexpected = 0
        failure: str | None = None
        try:
            while True:
                control.raise_if_stopping()
                attempts = transient + unexpected + 1
                by_budget = budget.spent()
                dead_reason = budget.reason() if by_budget else None
                if dead_reason is None and unexpected >= settings.unexpected_attempts:
                    dead_reason = failure  # None until an unexpected error was seen
                try:
                    if dead_reason is not None:
                        done = self._processor.record_dead(head, dead_reason, epoch, attempts)
                        stats.budget_dead += by_budget
                        return done
                    return self._processor.process_message(head, epoch, attempts)
                except LeadershipLost:
                    raise
                except TransientError as exc:
                    transient += 1
                    stats.transient_errors += 1
                    if by_budget:  # not even DEAD could be written: not this message's cause
                        budget.restart()
                        counted = False
                    else:
                        counted = budget.failed(exc)
                    stats.store_unavailable = not counted
                    control.note_error(exc)
                    self._failing(head, transient + unexpected, budget)
                    control.wait(settings.retry.delay(transient))
                except Exception as exc:  # unknown failure: bounded retries, then DEAD
                    unexpected += 1
                    stats.unexpected_errors += 1
                    failure = f"{type(exc).__name__}: {exc}"
                    control.note_error(exc)
                    self._failing(head, transient + unexpected, budget)
                    control.wait(settings.retry.delay(unexpected))
                self._leadership.renew_if_due(epoch)
        finally:
            stats.head_failing, stats.head_failing_since = None, None
            stats.head_attempts, stats.head_budget_attempts, stats.head_budget_seconds = 0, 0, 0.0

    def _failing(self, head: InboxRow, attempts: int, budget: HeadBudget) -> None:
        """Show the failing head in the stats (status, metrics)."""
        stats = self._control.stats
        if stats.head_failing != head.message_id:
            stats.head_failing, stats.head_failing_since = head.message_id, self._control.clock()
        stats.head_attempts = attempts
        stats.head_budget_attempts, stats.head_budget_seconds = budget.attempts, budget.seconds

    def _finished(self, rows: Sequence[InboxRow], results: Sequence[ProcessedMessage]) -> None:
        stats = self._control.stats
        stats.store_unavailable = False
        for processed in results:
            stats.outcomes[processed.proc.status.value] += 1
        stats.replayed += len(rows) - len(results)
        last = rows[-1]
        # A late row is below the cursor: the cursor never moves back.
        stats.cursor = max(stats.cursor or 0, last.message_id)
        if last.received_at is not None and not last.late:
            age = (self._control.clock() - last.received_at).total_seconds()
            stats.lag_seconds = max(0.0, age)
        if self._after_commit is not None:
            self._after_commit([row.message_id for row in rows])
        self._backfill.committed()


class ReadAhead:
    """Reads (and, with *prepare*, decodes) the batch after the one being applied, on a
    worker thread, so the inbox round trips and the decoding overlap the apply's waits on
    the database. Only one read is ever in flight: the inbox's read connection is never
    used by two threads at once.

    With *gather_every* the worker keeps gathering while the apply runs and rows keep
    arriving: every *gather_every* s it reads the rows after the last one it has and adds
    them (decoded), until a read finds nothing, the batch is full (*limit* rows,
    *max_chars* of text or *max_records* decoded flight records) or ``take`` asks for it.
    With *max_records* a read is decoded only until that budget is reached
    (``prepare_within``); the rows after it are left for the next read.
    Without it the next batch holds only what had arrived when the apply began, so at a
    steady arrival rate a message waited for that apply, the next one, and most of its
    own: gathering saves about one apply of waiting (docs/design.md, "What 1,000 messages
    per second cost")."""

    def __init__(
        self,
        inbox: Inbox,
        limit: int,
        prepare: Callable[[Sequence[InboxRow]], Sequence[InboxRow]] | None = None,
        *,
        gather_every: float = 0.0,
        max_chars: int | None = None,
        max_records: int | None = None,
    ) -> None:
        self._inbox = inbox
        self._limit = limit
        self._prepare = prepare
        self._gather_every = gather_every
        self._max_chars = max_chars
        self._max_records = max_records
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fs-read-ahead")
        self._pending: tuple[int, Future[Sequence[InboxRow]]] | None = None
        self._taken = threading.Event()  # set by take/close: stop gathering, hand over
        self.gathered_reads = 0  # reads after the first (the tests count them)

    def start(self, cursor: int) -> None:
        """Begin reading the rows after *cursor*."""
        self._taken.set()  # a gathering read not taken (none in the loop) ends first
        self._settle()
        self._taken.clear()
        self._pending = (cursor, self._pool.submit(self._gather, cursor))

    def _gather(self, cursor: int) -> Sequence[InboxRow]:
        first, weight = self._read(cursor, self._limit, 0)  # its errors reach take
        chunks = [first]
        count, chars = len(first), _chars(first)
        # Only while rows keep coming: at a few messages per second the read finds nothing,
        # and reading again during every apply would cost CPU that the apply needs.
        while chunks[-1] and self._room(count, chars, weight):
            if self._taken.wait(self._gather_every):
                break
            try:
                more, more_weight = self._read(
                    chunks[-1][-1].message_id, self._limit - count, weight
                )
            except Exception:  # the loop's next read meets it, with its retry and counting
                break  # what was read stays; nothing is lost, only not gathered yet
            self.gathered_reads += 1
            if not more:
                break
            chunks.append(more)
            count, chars = count + len(more), chars + _chars(more)
            weight += more_weight
        return join_prepared(chunks)

    def _room(self, count: int, chars: int, weight: int) -> bool:
        if self._gather_every <= 0 or count >= self._limit:
            return False
        if self._max_records is not None and weight >= self._max_records:
            return False
        return self._max_chars is None or chars < self._max_chars

    def _read(self, cursor: int, limit: int, weight: int) -> tuple[Sequence[InboxRow], int]:
        """The rows after *cursor*, decoded (with a record budget: only the prefix within
        what is left of it after *weight*), and their weight."""
        rows = self._inbox.read_after(cursor, limit)
        if self._prepare is None or not rows:
            return rows, len(rows)
        try:
            if self._max_records is None:
                return self._prepare(rows), len(rows)
            return prepare_within(rows, self._prepare, self._max_records - weight)
        except Exception:
            return rows, len(rows)

    def take(self, cursor: int) -> Sequence[InboxRow] | None:
        """The rows read after *cursor*, or None if no successful read for it was started
        (the caller then reads itself, with its own retry and error accounting)."""
        self._taken.set()
        pending = self._settle()
        if pending is None or pending[0] != cursor:
            return None
        try:
            return pending[1].result()
        except Exception:
            return None

    def close(self) -> None:
        """Wait for a read in flight and stop the worker."""
        self._taken.set()
        self._settle()
        self._pool.shutdown(wait=True)

    def _settle(self) -> tuple[int, Future[Sequence[InboxRow]]] | None:
        pending, self._pending = self._pending, None
        if pending is not None:
            wait([pending[1]])
        return pending


def _chars(rows: Sequence[InboxRow]) -> int:
    return sum(len(row.raw) for row in rows)

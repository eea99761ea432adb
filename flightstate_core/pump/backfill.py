"""Backfill: after commit, write each outcome back to its inbox row (docs/design.md, "One
message, one transaction").

The intents are durable in the store (``BackfillQueue``), so a backfill is never lost and
never re-applies a message: a failure is only counted (``stats.backfill_failures``) and
retried on its own back-off (``settings.backfill_retry``). With ``pipelined`` a thread
flushes when the FIFO loop pokes it after a commit, so the inbox UPDATE overlaps the next
batch's apply; it flushes at most once per ``settings.backfill_interval``, so at a low
arrival rate one flush carries several commits. Flushes are serialised by a lock, so the
loop's idle and shutdown flushes never run beside the thread's.

The idle flush asks the store only when it could find something: after a commit since the
last flush that left nothing pending, or ``_RECHECK_S`` after that flush (intents another
process left, e.g. an earlier leader's). So a quiet inbox polled every few milliseconds
costs no store query per poll.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from flightstate_core.ports import BackfillQueue, Inbox
from flightstate_core.pump.control import PumpControl

__all__ = ["Backfill", "BackfillThread"]

_RECHECK_S = 5.0  # an idle flush that knows nothing is pending still asks this often


class Backfill:
    """The flush of pending intents and its back-off (see the module docstring)."""

    def __init__(self, inbox: Inbox, queue: BackfillQueue, control: PumpControl) -> None:
        self._inbox = inbox
        self._queue = queue
        self._control = control
        self._attempt = 0
        self._next = 0.0  # monotonic time before which a failed flush is not retried
        self._lock = threading.Lock()
        self._thread: BackfillThread | None = None
        self._commits = 0  # commits seen (counted on the pump's thread only)
        # The commit count when the last flush that left nothing pending began, and when
        # that flush ran: no intent of ours can be pending while the count is unchanged.
        self._clean_at = -1
        self._clean_checked = 0.0

    # ------------------------------------------------------------------ while leading

    def start(self) -> None:
        """Begin leading: with ``pipelined``, flush on a thread after each commit."""
        settings = self._control.settings
        if settings.pipelined:
            self._thread = BackfillThread(self._background_flush, settings.backfill_interval)

    def stop(self) -> None:
        """Stop leading: finish the thread's flush in progress, if any."""
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.stop()

    def committed(self) -> None:
        """Backfill after every commit, not after the whole batch: when the batch falls
        back to one message at a time and a later message keeps failing, the messages
        committed before it are still backfilled (never held hostage by it)."""
        self._commits += 1
        if self._thread is not None:
            self._thread.poke()
        else:
            self.flush()

    def idle_flush(self) -> bool:
        """The idle loop's flush: at once unless the last one failed (then on its
        back-off, not on every poll). Whether intents are left."""
        if (
            self._clean_at == self._commits
            and self._control.monotonic() - self._clean_checked < _RECHECK_S
        ):
            return False  # nothing committed since a flush that left nothing pending
        return self.flush(force=self._control.stats.backfill_error is None)

    # ------------------------------------------------------------------ the flush

    def flush(self, *, force: bool = False) -> bool:
        """Write pending backfill intents to the inbox; return whether some are left.

        Outside *force* (idle, shutdown) a failed attempt is retried only after its back-off.
        """
        with self._lock:
            return self._flush_locked(force=force)

    def _background_flush(self) -> None:
        try:
            self.flush()
        except Exception as exc:  # the backfiller thread must outlive any surprise
            self._control.note_error(exc)

    def _flush_locked(self, *, force: bool) -> bool:
        control = self._control
        if not force and control.monotonic() < self._next:
            return True
        limit = control.settings.backfill_batch
        commits = self._commits  # before the first read: a later commit is not covered
        while True:
            try:
                intents = self._queue.pending_backfills(limit)
            except Exception as exc:  # never affects outcomes; retried later
                self._failed([], exc)
                return True
            if not intents:
                self._succeeded()
                self._clean(commits)
                return False
            ids = [intent.message_id for intent in intents]
            try:
                self._inbox.backfill(intents)
            except Exception as exc:  # never affects outcomes; retried later
                self._failed(ids, exc)
                return True
            try:
                self._queue.mark_backfilled(ids, control.clock())
            except Exception as exc:  # rows are written; marking is retried
                self._failed([], exc)
                return True
            control.stats.backfilled += len(ids)
            self._succeeded()
            if len(intents) < limit:
                self._clean(commits)
                return False

    def _clean(self, commits: int) -> None:
        """Nothing was left pending by a flush that began at commit count *commits*."""
        self._clean_at, self._clean_checked = commits, self._control.monotonic()

    def _succeeded(self) -> None:
        self._attempt = 0
        self._control.stats.backfill_error = None

    def _failed(self, ids: Sequence[int], exc: Exception) -> None:
        """One failed attempt (one log line, however many rows it carried)."""
        control, stats = self._control, self._control.stats
        stats.backfill_failures += 1
        stats.backfill_error = f"{type(exc).__name__}: {exc}"
        control.note_error(exc, what=f"backfill of {len(ids)} row(s) failed" if ids else
                           "backfill failed")  # fmt: skip
        self._attempt += 1
        self._next = control.monotonic() + control.settings.backfill_retry.delay(self._attempt)
        if ids:
            try:
                self._queue.record_backfill_failure(ids, f"{type(exc).__name__}: {exc}")
            except Exception as again:  # counting is best effort
                control.note_error(again)


class BackfillThread:
    """A thread that runs *flush* when it is poked, at most once per *interval* seconds
    (pokes before it runs make one flush). Its own monotonic clock: the interval only
    spaces flushes, it decides nothing."""

    def __init__(self, flush: Callable[[], None], interval: float = 0.0) -> None:
        self._flush = flush
        self._interval = interval
        self._wake = threading.Event()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fs-backfill", daemon=True)
        self._thread.start()

    def poke(self) -> None:
        """Ask for a flush."""
        self._wake.set()

    def stop(self) -> None:
        """Finish the flush in progress, if any, and end the thread (the pump's shutdown
        flush writes what is left)."""
        self._done.set()
        self._wake.set()
        self._thread.join()

    def _run(self) -> None:
        last = -self._interval
        while True:
            self._wake.wait()
            spacing = last + self._interval - time.monotonic()
            if spacing > 0 and self._done.wait(spacing):
                return
            self._wake.clear()
            if self._done.is_set():
                return
            last = time.monotonic()
            self._flush()

"""The dispatcher's reads of the outbox: the next batch read ahead on a worker thread while
this one is produced, and the backlog counted for the observer now and then.

Why worker threads: a batch read and a backlog count over a large outbox each take a
while; with an outbox that allows concurrent reads (``concurrent_marks``: more
connections) they overlap producing. A read ahead is used only while it starts exactly at
the batch the dispatcher asks for next; otherwise it is awaited and forgotten, so its
error never goes unobserved and no read runs on after a failed window.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from flightstate_core.domain.outbox import OutboxBacklog
from flightstate_core.ports import Outbox
from flightstate_kafka._observe import DispatchObserver
from flightstate_kafka._plan import OutboxRow

__all__ = ["OutboxReader"]

log = logging.getLogger("flightstate_kafka.dispatcher")


class OutboxReader:
    """Batches of *batch_size* outbox rows in EVENT_ID order, one read ahead."""

    def __init__(
        self,
        outbox: Outbox,
        batch_size: int,
        observer: DispatchObserver,
        backlog_every_s: float,
    ) -> None:
        self.outbox = outbox
        self.batch_size = batch_size
        self._observer = observer
        self._backlog_every_s = backlog_every_s
        self._backlog_at = 0.0
        # The next batch is read (and the backlog counted) on worker threads while this
        # one is produced, when the outbox allows it (more connections: concurrent_marks).
        self._concurrent = outbox.concurrent_marks
        self._pools: dict[str, ThreadPoolExecutor] = {}  # "read", "backlog"; made on demand
        self._counting: Future[OutboxBacklog] | None = None
        self._ahead: tuple[int, Future[Sequence[OutboxRow]]] | None = None

    def _fetch(self, after: int) -> Sequence[OutboxRow]:
        return self.outbox.fetch_rows(self.batch_size, after)

    def _pool(self, name: str) -> ThreadPoolExecutor:
        """The one-thread executor *name* (each keeps its submissions in order)."""
        pool = self._pools.get(name)
        if pool is None:
            pool = self._pools[name] = ThreadPoolExecutor(1, f"outbox-{name}")
        return pool

    @property
    def ahead_after(self) -> int:
        """Where a live read ahead starts (0: none, read from the stored watermark)."""
        return self._ahead[0] if self._ahead else 0

    def read_ahead(self, records: Sequence[OutboxRow]) -> None:
        """Start reading the batch after *records* on the reader thread (not after a
        short batch: the outbox was drained)."""
        self.drop_ahead()
        if self._concurrent and len(records) == self.batch_size:
            after = records[-1].event_id
            self._ahead = (after, self._pool("read").submit(self._fetch, after))

    def next(self, after: int) -> Sequence[OutboxRow]:
        """The batch after event id *after* (0: after the stored watermark)."""
        ahead, self._ahead = self._ahead, None
        if ahead is not None and ahead[0] == after:
            return ahead[1].result()
        if ahead is not None:
            ahead[1].exception()  # read for a window that failed: wait, and forget it
        return self._fetch(after)

    def drop_ahead(self) -> None:
        """Forget the read ahead (awaited first: never a read running or its error
        unobserved)."""
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            ahead[1].exception()

    def maybe_report_backlog(self) -> None:
        """Every ``backlog_every_s``: count the backlog for the observer — on a worker
        thread when the outbox allows it (a count over a large backlog takes a while)."""
        now = time.monotonic()
        if now - self._backlog_at < self._backlog_every_s:
            return
        self._backlog_at = now
        if not self._concurrent:
            self._observe_backlog(self.outbox.backlog())
            return
        if self._counting is None or self._counting.done():
            self._counting = self._pool("backlog").submit(self.outbox.backlog)
            self._counting.add_done_callback(self._counted)

    def _counted(self, future: Future[OutboxBacklog]) -> None:
        if future.cancelled():
            return
        error = future.exception()
        if error is not None:  # a metric: not worth failing the dispatch for
            log.warning("counting the outbox backlog failed: %s", error)
            return
        self._observe_backlog(future.result())

    def _observe_backlog(self, info: OutboxBacklog) -> None:
        self._observer.backlog(info.count, info.oldest_age_s)

    def close(self) -> None:
        """Drop the read ahead and end the worker threads."""
        self.drop_ahead()
        pools, self._pools = self._pools, {}
        for pool in pools.values():
            pool.shutdown(wait=True)

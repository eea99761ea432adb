"""Commit wake-ups for dispatchers in other processes: NOTIFY in the writing transaction,
LISTEN on a dedicated connection.

Why NOTIFY inside the transaction: PostgreSQL queues a notification with the transaction
and delivers it only when that transaction commits (a rollback drops it), after the rows
are visible, so a woken dispatcher always finds what woke it. Identical notifications of
one transaction are delivered once: the payload is empty, so one commit is one wake-up
however many saves it made. Delivery is not guaranteed across a listener's reconnect, so
the listener wakes once after each (re)connect and a dispatcher still polls as a fallback.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any, Final

import psycopg
from psycopg import sql

from flightstate_core.domain.records import ProcessedMessage

__all__ = ["DEFAULT_CHANNEL", "OutboxListener", "notify_outbox"]

log = logging.getLogger(__name__)

#: The NOTIFY channel of MSG_EVENT commits (per database; a listener names the same one).
DEFAULT_CHANNEL: Final = "flightstate_outbox"
_NOTIFY: Final = "SELECT pg_notify(%s, %s)"
_TICK_S: Final = 0.5  # how often the listening thread looks at its stop flag


def notify_outbox(
    conn: psycopg.Connection[Any], batch: Sequence[ProcessedMessage],
    channel: str = DEFAULT_CHANNEL,
) -> None:  # fmt: skip
    """Queue a notification on *channel* in *conn*'s open transaction if *batch* wrote
    outbox events (delivered to listeners when, and only if, the transaction commits)."""
    if any(processed.events for processed in batch):
        conn.execute(_NOTIFY, (channel, ""))


class OutboxListener:
    """LISTEN on *channel* on its own connection (a daemon thread) and call *wake* for
    every notification; reconnects after ``retry_s`` when the connection fails, and wakes
    once after each (re)connect, since notifications sent meanwhile are lost."""

    def __init__(
        self, dsn: str, wake: Callable[[], None], *, channel: str = DEFAULT_CHANNEL,
        connect_timeout: int = 10, retry_s: float = 1.0,
    ) -> None:  # fmt: skip
        self._dsn = dsn
        self._wake = wake
        self._listen = sql.SQL("LISTEN {}").format(sql.Identifier(channel))
        self._connect_timeout = connect_timeout
        self._retry_s = retry_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.listening = threading.Event()  # set while LISTEN is in effect (tests, probes)

    def start(self) -> None:
        """Start listening (returns at once; the thread connects)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="outbox-listen", daemon=True)
            self._thread.start()

    def close(self) -> None:
        """Stop listening; returns once the thread has closed its connection."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=self._connect_timeout + 2 * _TICK_S)

    def _run(self) -> None:
        failing = False  # warn once per outage, not once per retry
        while not self._stop.is_set():
            try:
                self._listen_once()
            except psycopg.Error as exc:  # server gone or restarted: listen again later
                quiet = failing and not self.listening.is_set()  # still down: already said
                log.log(logging.DEBUG if quiet else logging.WARNING,
                        "outbox LISTEN connection failed (retrying every %.1f s; the "
                        "dispatcher polls meanwhile): %s", self._retry_s, exc)  # fmt: skip
                failing = True
            finally:
                self.listening.clear()
            self._stop.wait(self._retry_s)

    def _listen_once(self) -> None:
        with psycopg.connect(self._dsn, autocommit=True,
                             connect_timeout=self._connect_timeout) as conn:  # fmt: skip
            conn.execute(self._listen)
            self.listening.set()
            self._wake()  # commits before LISTEN (or while reconnecting) sent to no one
            while not self._stop.is_set():
                for _notify in conn.notifies(timeout=_TICK_S):
                    self._wake()

"""A connection opened on first use and dropped after any failure, for the adapters.

Each inbox or outbound adapter keeps one or two long-lived connections: a failed call must
not leave a broken one behind, and the next call (the pump retries) must reconnect. This
holds no driver: it only calls the ``connect`` it is given, so the core stays I/O-free.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Generic, Protocol, TypeVar

__all__ = ["LazyConnection"]


class _Closable(Protocol):
    def close(self) -> None: ...


C = TypeVar("C", bound=_Closable)


class LazyConnection(Generic[C]):
    """One connection, opened by ``connect`` on first use (or when ``usable`` says the
    kept one is not); an exception inside ``use`` closes and forgets it."""

    def __init__(
        self, connect: Callable[[], C], *, usable: Callable[[C], bool] = lambda _conn: True
    ) -> None:
        self._connect = connect
        self._usable = usable
        self._conn: C | None = None

    @contextlib.contextmanager
    def use(self) -> Iterator[C]:
        """The connection, opened if needed."""
        try:
            if self._conn is None or not self._usable(self._conn):
                self._conn = self._connect()
            yield self._conn
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Close the connection (a later ``use`` reconnects)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):  # often already broken: best effort
                conn.close()

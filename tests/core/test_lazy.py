"""LazyConnection: opened on first use, kept, dropped after a failure, reopened when unusable."""

from __future__ import annotations

import pytest

from flightstate_core.support.lazy import LazyConnection


class FakeConnection:
    """Stands in for a driver connection: counts closes, can refuse to close."""

    def __init__(self, number: int, *, close_fails: bool = False) -> None:
        self.number = number
        self.closed = False
        self.close_fails = close_fails

    def close(self) -> None:
        self.closed = True
        if self.close_fails:
            raise OSError("socket already gone")


def _opener(**kwargs: bool) -> tuple[list[FakeConnection], LazyConnection[FakeConnection]]:
    opened: list[FakeConnection] = []

    def connect() -> FakeConnection:
        opened.append(FakeConnection(len(opened) + 1, **kwargs))
        return opened[-1]

    return opened, LazyConnection(connect, usable=lambda conn: not conn.closed)


def test_opens_once_and_keeps_the_connection() -> None:
    opened, lazy = _opener()
    assert opened == []  # nothing until first use
    with lazy.use() as first, lazy.use() as again:
        assert first is again
    assert len(opened) == 1


def test_a_failure_inside_drops_it_and_the_next_use_reconnects() -> None:
    opened, lazy = _opener()
    with pytest.raises(RuntimeError, match="query failed"), lazy.use():
        raise RuntimeError("query failed")
    assert opened[0].closed
    with lazy.use() as conn:
        assert conn.number == 2


def test_an_unusable_kept_connection_is_replaced() -> None:
    opened, lazy = _opener()
    with lazy.use() as conn:
        conn.closed = True  # e.g. the server closed it between calls
    with lazy.use() as conn:
        assert conn.number == 2
    assert len(opened) == 2


def test_close_is_best_effort_and_forgets_the_connection() -> None:
    opened, lazy = _opener(close_fails=True)
    with lazy.use():
        pass
    lazy.close()  # the driver's error on close is swallowed
    lazy.close()  # nothing kept: a no-op
    with lazy.use() as conn:
        assert conn.number == 2
    assert opened[0].closed

"""The ``ScheduleResponses`` contract: a transaction's own ``ResponseLog``.

A SUCCEEDED SCHD RESP is matched inside the transaction that applies it
(``engine.requests.schedule_response_hook``, docs/protocol.md §9), so the log must: list the open
requests oldest first; log a response once (a second log of it is refused: a concurrent
match won) with its request or none (unsolicited); answer a request so that it is no
longer open; and commit or roll back with the transaction. A subclass provides the
``StoreHooks`` and ``request`` (the backend's own ``request_schedule``).
"""

# ruff: noqa: S101, PT012 - a pytest contract: assert; a raises block holds the whole
# transaction that must roll back

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from flightstate_core.engine.requests import match_logged
from flightstate_core.ports import RequestStatus, ScheduleResponses
from flightstate_core.testing.samples import NOW, InjectedFault
from flightstate_core.testing.store_hooks import StoreHooks

__all__ = ["RecordingOutbound", "ScheduleResponsesContract"]

_DAY = NOW + timedelta(days=1)
_NARROW = (_DAY, _DAY + timedelta(hours=6))
_WIDE = (_DAY, _DAY + timedelta(days=2))


class RecordingOutbound:
    """An ``Outbound`` that keeps what it was given (the transport is not under test)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, datetime]] = []

    def send(self, raw: str, routing_id: str, *, at: datetime) -> int:
        self.sent.append((raw, routing_id, at))
        return len(self.sent)


class ScheduleResponsesContract(StoreHooks):
    """Tests every ``ScheduleResponses`` store passes (subclass and provide the hooks)."""

    def request(self, store: Any, window: tuple[datetime, datetime]) -> int:
        """Send and record one OPEN request for *window* at ``NOW``; its REQUEST_ID."""
        raise NotImplementedError

    def open_ids(self, store: Any) -> list[int]:
        with store.transaction() as tx:
            tx.lock_pipeline(None)
            return [r.request_id for r in tx.response_log().open_requests(None)]

    def test_transactions_keep_a_response_log(self, store: Any) -> None:
        with store.transaction() as tx:
            tx.lock_pipeline(None)
            assert isinstance(tx, ScheduleResponses)

    def test_open_requests_are_listed_oldest_first(self, store: Any) -> None:
        first, second = self.request(store, _NARROW), self.request(store, _WIDE)
        with store.transaction() as tx:
            tx.lock_pipeline(None)
            found = tx.response_log().open_requests(None)
        assert [r.request_id for r in found] == [first, second]
        assert [(r.window_start, r.window_end) for r in found] == [_NARROW, _WIDE]
        assert {(r.status, r.attempts, r.answered_by) for r in found} == {
            (RequestStatus.OPEN, 1, None)
        }

    def test_a_response_is_logged_once(self, store: Any) -> None:
        first = self.request(store, _NARROW)
        with store.transaction() as tx:
            tx.lock_pipeline(None)
            log = tx.response_log()
            assert log.logged(10) == (False, None)
            assert log.log(10, first, _NARROW, NOW) is True
            assert log.log(10, None, None, NOW) is False  # a concurrent match won
            assert log.log(12, None, None, NOW) is True  # unsolicited
        with store.transaction() as tx:
            tx.lock_pipeline(None)
            log = tx.response_log()
            assert (log.logged(10), log.logged(12), log.logged(11)) == (
                (True, first), (True, None), (False, None),
            )  # fmt: skip

    def test_an_answered_request_is_no_longer_open(self, store: Any) -> None:
        first, second = self.request(store, _NARROW), self.request(store, _WIDE)
        with store.transaction() as tx:
            tx.lock_pipeline(None)
            tx.response_log().answer(first, 10, NOW)
        assert self.open_ids(store) == [second]

    def test_the_log_rolls_back_with_its_transaction(self, store: Any) -> None:
        first = self.request(store, _NARROW)
        with pytest.raises(InjectedFault), store.transaction() as tx:
            tx.lock_pipeline(None)
            log = tx.response_log()
            assert log.log(10, first, _NARROW, NOW)
            log.answer(first, 10, NOW)
            raise InjectedFault("the RESP failed after matching")
        assert self.open_ids(store) == [first]
        with store.transaction() as tx:
            tx.lock_pipeline(None)
            assert tx.response_log().logged(10) == (False, None)

    def test_a_response_matches_the_oldest_open_request_covering_it(self, store: Any) -> None:
        wide, narrow = self.request(store, _WIDE), self.request(store, _NARROW)
        window = (_DAY + timedelta(hours=1), _DAY + timedelta(hours=2))
        with store.transaction() as tx:
            tx.lock_pipeline(None)
            log = tx.response_log()
            assert match_logged(log, 10, window, as_of=None, now=NOW) == wide
            assert match_logged(log, 10, window, as_of=None, now=NOW) == wide  # idempotent
            assert match_logged(log, 11, window, as_of=None, now=NOW) == narrow
            assert match_logged(log, 12, window, as_of=None, now=NOW) is None
        assert self.open_ids(store) == []

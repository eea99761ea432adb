"""The ``Outbound`` contract: where outbound SIS messages (RQFD requests) go.

A subclass provides the ``outbound_harness`` fixture: an ``OutboundHarness`` over an
empty outbound table. The tests check what ``request_schedule`` relies on: ``send``
returns the row's id once the row is committed (another session sees it at once), ids
rise with each send, and the text (Chinese included) and the routing id are kept exactly.
"""

# ruff: noqa: S101 - a pytest contract: assert; CJK text on purpose

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Protocol

from flightstate_core.engine.requests import ROUTING_RQFD
from flightstate_core.ports import Outbound

__all__ = ["OutboundContract", "OutboundHarness"]

_AT = datetime(2026, 11, 30, 1, 2, 3, tzinfo=UTC)
_TEXT = "<MSG><META><TYPE>RQFD</TYPE></META><RMRK>航班 请求</RMRK></MSG>"


class OutboundHarness(Protocol):
    """What a backend's test gives the contract."""

    outbound: Outbound

    def sent(self) -> Sequence[tuple[int, str, str]]:
        """(id, text, routing id) of every row, id order, read on a session of its own."""


class OutboundContract:
    """Tests every ``Outbound`` adapter passes (subclass and provide ``outbound_harness``)."""

    def test_a_sent_message_is_committed_with_its_id(
        self, outbound_harness: OutboundHarness
    ) -> None:
        sent_id = outbound_harness.outbound.send(_TEXT, ROUTING_RQFD, at=_AT)
        assert list(outbound_harness.sent()) == [(sent_id, _TEXT, ROUTING_RQFD)]

    def test_ids_rise_with_each_send(self, outbound_harness: OutboundHarness) -> None:
        outbound = outbound_harness.outbound
        ids = [outbound.send(f"{_TEXT}{n}", ROUTING_RQFD, at=_AT) for n in range(3)]
        assert ids == sorted(set(ids))
        assert [(i, text) for i, text, _ in outbound_harness.sent()] == [
            (i, f"{_TEXT}{n}") for n, i in enumerate(ids)
        ]

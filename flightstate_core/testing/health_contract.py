"""The ``StoreHealth`` contract: ``ping`` tells a store that answers from one that does not.

The pump's retry budget asks it after the head message failed transiently (docs/design.md,
"A retry budget for the head message"): True while the store answers (even while another
session holds the locks a writer waits for, where the store can tell), False, within a
few seconds and never raising, when it does not. A subclass provides the ``store`` fixture
and ``unreachable``.
"""

# ruff: noqa: S101 - a pytest contract: assert

from __future__ import annotations

import time
from typing import Any

import pytest

from flightstate_core.ports import StoreHealth

__all__ = ["StoreHealthContract"]

#: Seconds a ping may take on a store that does not answer (the probe's own timeouts).
PATIENCE = 15.0


class StoreHealthContract:
    """Tests every ``StoreHealth`` store passes."""

    @pytest.fixture
    def store(self) -> Any:
        raise NotImplementedError("subclass provides a store that answers")

    def unreachable(self, store: Any) -> Any:
        """A store of the same kind whose server does not answer."""
        raise NotImplementedError

    def test_the_store_has_a_health_probe(self, store: Any) -> None:
        assert isinstance(store, StoreHealth)

    def test_a_store_that_answers_is_healthy(self, store: Any) -> None:
        assert store.ping() is True
        assert store.ping() is True  # asked again, the same answer

    def test_a_store_that_does_not_answer_is_not_within_seconds(self, store: Any) -> None:
        down = self.unreachable(store)
        started = time.monotonic()
        assert down.ping() is False  # and no exception
        assert time.monotonic() - started < PATIENCE

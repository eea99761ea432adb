"""A downstream test's view of flightstate's topics: dispatch an outbox, read what arrived.

Why a helper: a test that asks for "two ``schd`` records" after two changes of one flight
may wait out its timeout, because the dispatcher coalesces a flight's states within one
window (docs/consumers.md) and the topic then holds one record, the latest. What a
consumer may rely on is the latest state per FLID, so ``KafkaTopics.schd_states`` waits
until each FLID's latest record carries at least the state version the test expects (its
``state-version`` header), and returns those states.

``KafkaTopics.publish`` runs the runner's own dispatcher (transactional, as in
production) over an outbox until nothing is left undelivered.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from attrs import frozen
from confluent_kafka import Message

from flightstate_core.ports import Outbox
from flightstate_testing.kafka import consume_until

__all__ = ["KafkaTopics", "header"]


def header(record: Message, name: str) -> str | None:
    """The value of header *name* of *record* as text (None when absent)."""
    found = record.headers() or []
    pairs = found.items() if isinstance(found, dict) else found
    for key, value in pairs:
        if key == name:
            return None if value is None else _text(value)
    return None


def _text(value: str | bytes) -> str:
    return value if isinstance(value, str) else value.decode()


@frozen
class KafkaTopics:
    """A ``schd`` and a ``msg`` topic on a broker, for one test (the plugin's
    ``kafka_topics`` fixture makes them with unique names)."""

    bootstrap: str
    schd: str
    msg: str

    def publish(self, outbox: Outbox, timeout: float = 30.0) -> int:
        """Dispatch *outbox* to these topics until no row is left undelivered; the rows
        settled. ``TimeoutError`` when rows are still undelivered after *timeout* s."""
        from flightstate_kafka import Dispatcher, KafkaSettings  # noqa: PLC0415 - Kafka extra

        settings = KafkaSettings(bootstrap_servers=self.bootstrap,
                                 topics={"schd": self.schd, "msg": self.msg},
                                 transactional_id=f"fs-test-{self.schd}",
                                 producer_overrides={"log_level": "3"})  # fmt: skip
        dispatcher = Dispatcher(outbox, settings, watch_commits=False)
        deadline = time.monotonic() + timeout
        settled = 0
        try:
            while outbox.backlog().count:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"outbox rows still undelivered after {timeout:g} s")
                settled += dispatcher.dispatch_once(threading.Event())
        finally:
            dispatcher.close()
        return settled

    def schd_states(
        self, versions: Mapping[str, int], timeout: float = 30.0
    ) -> dict[str, dict[str, Any] | None]:
        """Each FLID's latest ``schd`` state (None: a tombstone), once every FLID of
        *versions* has a record with at least that ``state-version``; ``TimeoutError``
        naming the FLIDs still behind after *timeout* s."""
        latest: dict[str, Message] = {}

        def seen(record: Message) -> bool:
            key = record.key()
            if key is not None:
                latest[_text(key)] = record
            return all(_version(latest.get(flid)) >= want for flid, want in versions.items())

        if not consume_until(self.bootstrap, self.schd, seen, timeout):
            behind = sorted(f for f, want in versions.items() if _version(latest.get(f)) < want)
            raise TimeoutError(f"schd: no record at the expected state-version after "
                               f"{timeout:g} s for FLID(s) {', '.join(behind)}")  # fmt: skip
        return {flid: _value(record) for flid, record in latest.items()}

    def notices(self, done: Callable[[list[dict[str, Any]]], bool],
                timeout: float = 30.0) -> list[dict[str, Any]]:  # fmt: skip
        """The ``msg`` change notices in order, once *done(notices)* holds;
        ``TimeoutError`` after *timeout* s with what had arrived."""
        found: list[dict[str, Any]] = []

        def seen(record: Message) -> bool:
            value = _value(record)
            if value is not None:
                found.append(value)
            return done(found)

        if not consume_until(self.bootstrap, self.msg, seen, timeout) and not done(found):
            raise TimeoutError(f"msg: condition not met after {timeout:g} s; {found!r}")
        return found


def _version(record: Message | None) -> int:
    text = None if record is None else header(record, "state-version")
    return -1 if text is None else int(text)


def _value(record: Message) -> dict[str, Any] | None:
    raw = record.value()
    return None if raw is None else dict(json.loads(raw))

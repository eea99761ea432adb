"""Issue 17: a dispatcher fenced by a lease epoch and by Kafka transactions.

Two dispatchers share one transactional id (as every runner of a deployment does). The
first passes its fence check and, before it produces, the second takes over and starts its
producer (a freeze between check and send): the broker refuses the first's records. When
the first rebuilds its producer (re-initialising, which fences the second for a moment) its
fence check fails, so it publishes nothing more; the second rebuilds and finishes. Every
record carries its dispatcher's epoch, and per partition it never goes back.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict

import pytest
from attrs import evolve

from flightstate_core.errors import LeadershipLost, TransientError
from flightstate_kafka import Dispatcher, KafkaSettings
from flightstate_pg.outbox import PgOutbox
from tests.fixtures.kafka import read_topic
from tests.fixtures.util import unique_name
from tests.kafka._outbox_db import EventModel, insert_rows

pytestmark = [pytest.mark.pg, pytest.mark.kafka]


def _epochs(settings: KafkaSettings, bootstrap: str) -> dict[int, list[int]]:
    """Per partition, the ``fs-epoch`` of each schd record in offset order."""
    records = read_topic(bootstrap, settings.topics["schd"], 10**6, timeout=8)
    found: dict[int, list[int]] = defaultdict(list)
    for record in sorted(records, key=lambda r: (r.partition(), r.offset())):
        found[record.partition()].append(int(dict(record.headers() or [])["fs-epoch"]))
    return found


def _drain(dispatcher: Dispatcher) -> None:
    for _ in range(20):  # a fenced producer fails a window, the rebuilt one delivers
        try:
            if dispatcher.dispatch_once() == 0:
                return
        except TransientError:
            continue
    raise AssertionError("the new leader never drained the outbox")


def _until_it_produces(dispatcher: Dispatcher) -> None:
    """A few rounds (the first may use an empty read ahead of the previous window)."""
    for _ in range(3):
        dispatcher.dispatch_once()


def _fenced_pair(outbox_dsn: str, settings: KafkaSettings, **old_overrides: str) -> tuple[
    Dispatcher, Dispatcher, dict[str, int]]:
    leader = {"epoch": 1}
    old_settings = evolve(settings, producer_overrides=old_overrides)
    old = Dispatcher(PgOutbox(outbox_dsn), old_settings, epoch=1,
                     fence=lambda: leader["epoch"] == 1)  # fmt: skip
    new = Dispatcher(PgOutbox(outbox_dsn), settings, epoch=2,
                     fence=lambda: leader["epoch"] == 2)  # fmt: skip
    return old, new, leader


def test_a_deposed_dispatcher_checks_its_fence_and_publishes_nothing(
    outbox_dsn: str, settings: KafkaSettings, kafka_bootstrap: str
) -> None:
    """The lease moved on: the next window of the old dispatcher stops before producing,
    and a rebuilt old producer (re-initialised: it fences the new one for a moment) fails
    its post-init check; the new leader's rebuilt producer then finishes."""
    settings = evolve(settings, transactional_id=unique_name("fs-tx"), batch_size=50)
    model = EventModel(flids=20)
    insert_rows(outbox_dsn, model.next_rows(100))
    old, new, leader = _fenced_pair(outbox_dsn, settings)
    try:
        assert old.dispatch_once() > 0  # epoch 1 leads and publishes
        before = sum(e.count(1) for e in _epochs(settings, kafka_bootstrap).values())
        leader["epoch"] = 2
        _drain(new)
        insert_rows(outbox_dsn, model.next_rows(100))
        with pytest.raises(LeadershipLost):
            _until_it_produces(old)  # the per-window check
        old.rebuild("woken after a pause")
        with pytest.raises(LeadershipLost):
            old.dispatch_once()  # init_transactions, then the post-init check
        _drain(new)
    finally:
        old.close()
        new.close()
    epochs = _epochs(settings, kafka_bootstrap)
    assert sum(e.count(1) for e in epochs.values()) == before
    assert all(2 in e for e in epochs.values())
    for per_partition in epochs.values():
        assert per_partition == sorted(per_partition)


def test_records_held_by_a_paused_producer_are_refused_by_the_broker(
    outbox_dsn: str, settings: KafkaSettings, kafka_bootstrap: str
) -> None:
    """The old dispatcher passed its check and handed a window to its producer, which still
    holds it (a long linger stands for a pause) when the new leader starts and publishes:
    the broker refuses the old producer's records (PRODUCER_FENCED), the window settles
    nothing and no record of epoch 1 follows one of epoch 2."""
    settings = evolve(settings, transactional_id=unique_name("fs-tx"), batch_size=50)
    model = EventModel(flids=20)
    insert_rows(outbox_dsn, model.next_rows(100))
    old, new, leader = _fenced_pair(outbox_dsn, settings, **{"linger.ms": "4000"})
    failure: list[BaseException] = []

    def old_window() -> None:
        try:
            old.dispatch_once()
        except BaseException as exc:
            failure.append(exc)

    try:
        old.producer()  # started while it leads
        worker = threading.Thread(target=old_window)
        worker.start()
        deadline = time.monotonic() + 30
        while not (old._producer is not None and len(old._producer)):
            assert time.monotonic() < deadline, "the old window never produced"
            time.sleep(0.01)
        leader["epoch"] = 2  # the lease moved on while the old records wait in the producer
        _drain(new)
        worker.join(timeout=60)
    finally:
        old.close()
        new.close()
    assert len(failure) == 1
    assert isinstance(failure[0], TransientError), failure
    epochs = _epochs(settings, kafka_bootstrap)
    assert sum(e.count(1) for e in epochs.values()) == 0
    assert all(set(e) == {2} for e in epochs.values())

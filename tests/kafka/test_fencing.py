"""A dispatcher fenced by a lease epoch and by Kafka transactions.

Two dispatchers share one transactional id (as every runner of a deployment does). The
first passes its fence check and, before it produces, the second takes over and starts its
producer (a freeze between check and send): the broker refuses the first's records. The
first then checks its fence before it builds a new producer, so it never re-initialises
and the second's open window commits; only when paused between that check and its init
does it re-initialise (fencing the second for a moment), and its post-init check fails, so
it publishes nothing more; the second rebuilds and finishes. Every record carries its
dispatcher's epoch, and per partition it never goes back.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict

import pytest
from attrs import evolve

from flightstate_core.domain.errors import LeadershipLost, TransientError
from flightstate_kafka import Dispatcher, KafkaSettings
from flightstate_kafka.producer import build_producer
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


def _fenced_pair(
    outbox_dsn: str, settings: KafkaSettings, **old_overrides: str
) -> tuple[Dispatcher, Dispatcher, dict[str, int]]:
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
    and after a rebuild it stops before building a producer."""
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
            old.dispatch_once()  # the check before a producer is built
        assert old.slot.current is None
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
        while not (old.slot.current is not None and len(old.slot.current)):
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


def test_a_deposed_dispatcher_does_not_initialise_while_the_leader_has_a_window_open(
    outbox_dsn: str, settings: KafkaSettings, kafka_bootstrap: str
) -> None:
    """The leader's window is open (its records held in its producer by a long linger) when
    the woken ex-leader, its producer dropped, tries a window: it builds no producer, so it
    calls no ``init_transactions`` that would fence the leader's. The leader's window
    commits without a rebuild. (On tansu such an init racing a live transaction can also
    leave it open for good, hiding the partition's later records from read_committed.)"""
    settings = evolve(settings, transactional_id=unique_name("fs-tx"), batch_size=50)
    insert_rows(outbox_dsn, EventModel(flids=20).next_rows(60))
    built: list[str] = []

    def counted(conf: dict[str, object]) -> object:
        built.append(str(conf["transactional.id"]))
        return build_producer(conf)

    old = Dispatcher(PgOutbox(outbox_dsn), settings, epoch=1, fence=lambda: False,
                     producer_factory=counted)  # fmt: skip
    new = Dispatcher(PgOutbox(outbox_dsn), evolve(settings, producer_overrides={
        "linger.ms": "1500"}), epoch=2, fence=lambda: True)  # fmt: skip
    outcome: list[object] = []
    worker = threading.Thread(target=lambda: outcome.append(_settled_or_error(new)))
    try:
        new.producer()
        worker.start()
        deadline = time.monotonic() + 30
        while not (new.slot.current is not None and len(new.slot.current)):
            assert time.monotonic() < deadline, "the leader's window never produced"
            time.sleep(0.01)
        with pytest.raises(LeadershipLost):
            old.dispatch_once()
        worker.join(timeout=60)
    finally:
        old.close()
        new.close()
    assert built == []
    assert outcome == [120]  # 60 changes: a schd and a msg row each
    assert new.rebuilds == 0
    assert _notes_read_committed(settings, kafka_bootstrap) == 60


def test_an_ex_leader_paused_between_its_checks_publishes_nothing_after_init(
    outbox_dsn: str, settings: KafkaSettings, kafka_bootstrap: str
) -> None:
    """The lease moves on while the ex-leader builds its producer (its check before the
    build passed): it initialises, fencing the leader's producer for a moment, and its
    post-init check fails; the leader's rebuilt producer finishes."""
    settings = evolve(settings, transactional_id=unique_name("fs-tx"), batch_size=50)
    model = EventModel(flids=20)
    insert_rows(outbox_dsn, model.next_rows(100))
    answers = [True, False]  # before the build: still leads; after init: deposed
    old = Dispatcher(PgOutbox(outbox_dsn), settings, epoch=1, fence=lambda: answers.pop(0))
    new = Dispatcher(PgOutbox(outbox_dsn), settings, epoch=2, fence=lambda: True)
    try:
        _drain(new)
        insert_rows(outbox_dsn, model.next_rows(100))
        with pytest.raises(LeadershipLost):
            old.dispatch_once()
        assert answers == []
        _drain(new)
    finally:
        old.close()
        new.close()
    assert new.rebuilds == 1  # fenced by the ex-leader's init, rebuilt
    assert all(set(e) == {2} for e in _epochs(settings, kafka_bootstrap).values())
    assert _notes_read_committed(settings, kafka_bootstrap) >= 200  # re-sent: duplicates


def _notes_read_committed(settings: KafkaSettings, bootstrap: str) -> int:
    """How many ``msg`` records a read_committed reader gets (one per change, never
    coalesced)."""
    return len(read_topic(bootstrap, settings.topics["msg"], 10**6, timeout=8))


def _settled_or_error(dispatcher: Dispatcher) -> object:
    try:
        return dispatcher.dispatch_once()
    except Exception as exc:  # the test compares it with the settled count
        return exc

"""The dispatcher wakes on commit instead of waiting for its next poll (real PostgreSQL,
the tansu broker). Every test that proves a wake-up sets the fallback poll to 30 s and
waits with a 10 s deadline, so it can only pass through the wake-up; the fallback test
proves the opposite: a commit nobody announced is still delivered by the poll."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from attrs import evolve

from flightstate_core.domain.config import CoreConfig
from flightstate_core.testing.store_contract import flight, processed
from flightstate_kafka import Dispatcher, KafkaSettings
from flightstate_pg import PgStore
from flightstate_pg.outbox import DEFAULT_CHANNEL, PgOutbox
from flightstate_runner.config import load_config
from flightstate_runner.metrics import RunnerMetrics
from flightstate_runner.observe import MetricsObserver
from flightstate_runner.wiring import build_dispatcher, build_pump, open_services, provision
from flightstate_testing.traffic import generate_day
from tests.fixtures.kafka import read_topic
from tests.fixtures.util import unique_name
from tests.kafka._outbox_db import EventModel, insert_rows, undelivered, watermark
from tests.pump.gap_writers import Writer, create_table

pytestmark = [pytest.mark.pg, pytest.mark.kafka]

_FALLBACK_S = 30.0  # longer than the deadline: only a wake-up can deliver in time
_DEADLINE_S = 10.0


def _wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + _DEADLINE_S
    while not condition():
        assert time.monotonic() < deadline, f"not within {_DEADLINE_S:.0f} s: {what}"
        time.sleep(0.01)


def _delivered(dsn: str) -> Callable[[], bool]:
    """Some event exists and every one is delivered (the watermark moved over it)."""
    return lambda: watermark(dsn) > 0 and undelivered(dsn) == 0


@pytest.fixture
def running() -> Iterator[Callable[[Dispatcher], Dispatcher]]:
    """``start(dispatcher)`` runs it on a thread; stopped (and closed) after the test."""
    stop = threading.Event()
    threads: list[threading.Thread] = []

    def start(dispatcher: Dispatcher) -> Dispatcher:
        thread = threading.Thread(target=dispatcher.run, args=(stop,), daemon=True)
        thread.start()
        threads.append(thread)
        return dispatcher

    yield start
    stop.set()
    for thread in threads:
        thread.join(timeout=30)
        assert not thread.is_alive()


def _commit_one_message(dsn: str) -> None:
    """What a pump in another process does: one transaction that writes outbox events."""
    store = PgStore(dsn, CoreConfig())
    try:
        with store.transaction() as tx:
            tx.lock_pipeline(None)
            tx.save(processed(1, flight("A")))
    finally:
        store.close()


def test_a_pump_commit_wakes_the_runner_dispatcher(outbox_dsn: str, kafka_bootstrap: str) -> None:
    """The runner's wiring: the pump's ``after_commit`` wakes the dispatcher it built."""
    table = unique_name("cmin")
    create_table("pg", outbox_dsn, table)
    config = load_config(environ={
        "FLIGHTSTATE_PG_DSN": outbox_dsn, "FLIGHTSTATE_INBOX": "store",
        "FLIGHTSTATE_INBOX_TABLE": table,
        "FLIGHTSTATE_TOPIC_SCHD": unique_name("schd"), "FLIGHTSTATE_TOPIC_MSG": unique_name("msg"),
        "FLIGHTSTATE_POLL_INTERVAL": "0.1", "FLIGHTSTATE_LEASE_TTL": "3",
    })  # fmt: skip
    provision(config, kafka_bootstrap)
    services = open_services(config)
    metrics = RunnerMetrics()
    dispatcher: Dispatcher = build_dispatcher(services, MetricsObserver(metrics),
                                              kafka_bootstrap, quiet=True)  # fmt: skip
    dispatcher.settings = evolve(dispatcher.settings, idle_sleep_s=_FALLBACK_S)
    pump = build_pump(services, metrics, until_idle=False, log=logging.getLogger("test.wake"))
    stop = threading.Event()
    threads = [threading.Thread(target=dispatcher.run, args=(stop,), daemon=True),
               threading.Thread(target=pump.run, daemon=True)]  # fmt: skip
    for thread in threads:
        thread.start()
    listening = psycopg.connect(outbox_dsn, autocommit=True)
    listening.execute(f"LISTEN {DEFAULT_CHANNEL}")
    try:
        _wait_for(dispatcher.idle.is_set, "the dispatcher waits (outbox empty)")
        writer = Writer("pg", outbox_dsn, table)
        try:
            writer.insert(generate_day(seed=1, flights=1, messages=1)[0])
            writer.commit()
        finally:
            writer.close()
        _wait_for(_delivered(outbox_dsn), "the pumped message's events delivered")
        assert dispatcher.wakeups >= 1
        assert read_topic(kafka_bootstrap, config.topic_schd, 1, timeout=_DEADLINE_S)
        # Woken in-process, so the runner's commits send no NOTIFY (nobody listens for it).
        assert list(listening.notifies(timeout=0.5)) == []
    finally:
        listening.close()
        pump.request_stop()
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
        services.close()


def test_a_commit_on_another_connection_wakes_a_listening_dispatcher(
    outbox_dsn: str, settings: KafkaSettings, running: Any
) -> None:
    outbox = PgOutbox(outbox_dsn)
    dispatcher = running(Dispatcher(outbox, evolve(settings, idle_sleep_s=_FALLBACK_S)))
    # The listener wakes once right after LISTEN; waiting again after that, the dispatcher
    # can only be woken by a notification.
    _wait_for(lambda: dispatcher.wakeups >= 1 and dispatcher.idle.is_set(), "LISTEN active")
    woken = dispatcher.wakeups
    _commit_one_message(outbox_dsn)
    _wait_for(_delivered(outbox_dsn), "the committed events delivered")
    assert dispatcher.wakeups > woken
    assert read_topic(settings.bootstrap_servers, settings.topics["schd"], 1)


def test_a_lost_notification_costs_only_the_fallback_poll(
    outbox_dsn: str, settings: KafkaSettings, running: Any
) -> None:
    """Rows inserted by plain SQL send no NOTIFY (as if it was lost): the poll finds them."""
    outbox = PgOutbox(outbox_dsn)
    dispatcher = running(Dispatcher(outbox, evolve(settings, idle_sleep_s=0.5)))
    _wait_for(lambda: dispatcher.wakeups >= 1 and dispatcher.idle.is_set(), "LISTEN active")
    woken = dispatcher.wakeups
    insert_rows(outbox_dsn, EventModel(flids=3, seed=4).next_rows(5))
    _wait_for(_delivered(outbox_dsn), "the unannounced rows delivered")
    assert dispatcher.wakeups == woken  # no wake-up: the fallback poll delivered them


def test_wake_is_thread_safe_and_ends_an_idle_wait(
    outbox_dsn: str, settings: KafkaSettings, running: Any
) -> None:
    """``wake()`` from another thread (what the pump's commit does in one process)."""
    outbox = PgOutbox(outbox_dsn)
    dispatcher = running(Dispatcher(outbox, evolve(settings, idle_sleep_s=_FALLBACK_S),
                                    watch_commits=False))  # fmt: skip
    _wait_for(dispatcher.idle.is_set, "the dispatcher waits")
    insert_rows(outbox_dsn, EventModel(flids=2, seed=5).next_rows(3))
    wakers = [threading.Thread(target=dispatcher.wake) for _ in range(4)]
    for waker in wakers:
        waker.start()
    for waker in wakers:
        waker.join()
    _wait_for(_delivered(outbox_dsn), "the rows delivered after wake()")
    assert dispatcher.wakeups >= 1


class _CountingOutbox(PgOutbox):
    """A PgOutbox that counts its batch reads."""

    reads = 0

    def fetch_rows(self, limit: int, after_event_id: int = 0) -> Any:
        self.reads += 1
        return super().fetch_rows(limit, after_event_id)


def test_a_window_that_read_to_the_end_waits_for_the_next_wake_up(
    outbox_dsn: str, settings: KafkaSettings, running: Any
) -> None:
    """At a few messages per second each window is one short batch: the dispatcher does
    not read the (now empty) outbox again until a commit wakes it or the poll is due."""
    outbox = _CountingOutbox(outbox_dsn)
    dispatcher = running(Dispatcher(outbox, evolve(settings, idle_sleep_s=_FALLBACK_S),
                                    watch_commits=False))  # fmt: skip
    _wait_for(dispatcher.idle.is_set, "the dispatcher waits")
    model = EventModel(flids=2, seed=6)
    for round_ in range(1, 4):
        before = outbox.reads
        insert_rows(outbox_dsn, model.next_rows(3))
        dispatcher.wake()
        _wait_for(lambda: undelivered(outbox_dsn) == 0, f"round {round_} delivered")
        _wait_for(dispatcher.idle.is_set, "the dispatcher waits again")
        time.sleep(0.3)  # time for a needless re-read to show
        assert outbox.reads - before == 1, f"round {round_}: one read per wake-up"
        assert dispatcher.wakeups == round_

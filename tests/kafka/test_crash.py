"""Crash test: a dispatcher process SIGKILLed at random points 20 times, the broker
stopped and restarted once; the consumer helper's projection ends equal to the expected
final state of every FLID, built from MSG_EVENT.

tansu keeps records in memory only, so a restart loses what the consumer had not read.
Before stopping it the test lets the consumer catch up with everything at or below the
dispatch watermark (a durable Kafka would not need that); what it checks across the
outage is the dispatcher: the watermark does not move while the broker is down, and
delivery resumes with a rebuilt producer (an idempotent producer does not survive a
tansu restart).
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg
import pytest

from flightstate_kafka import DictProjection, KafkaSettings, TopicSettings, provision_topics
from tests.fixtures.kafka import TansuBroker
from tests.kafka._consume import assigned_consumer, consume_until
from tests.kafka._outbox_db import (
    EventModel,
    expected_projection,
    insert_rows,
    undelivered,
    watermark,
)
from tests.kafka.conftest import make_settings

pytestmark = [pytest.mark.pg, pytest.mark.kafka, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
KILLS = 20
RESTART_AT = 10


class DispatcherProcess:
    """``tests.kafka.dispatcher_proc`` as a child process, ended by PID."""

    def __init__(self, dsn: str, settings: KafkaSettings, log: Path) -> None:
        argv = [sys.executable, "-m", "tests.kafka.dispatcher_proc", dsn,
                settings.bootstrap_servers, settings.topics["schd"], settings.topics["msg"], "50"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        with log.open("ab") as out:
            self.proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=out,
                                         stdin=subprocess.DEVNULL)

    def kill(self) -> None:
        """SIGKILL: a crash at whatever point it has reached."""
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def terminate(self) -> int:
        """SIGTERM: graceful stop (flush with deadline); returns the exit code."""
        os.kill(self.proc.pid, signal.SIGTERM)
        return self.proc.wait(30)


def dispatched_latest(dsn: str) -> dict[str, int]:
    """Per FLID, the STATE_VERSION of the newest ``schd`` row at or below the watermark."""
    query = ("SELECT DISTINCT ON (flid) flid, state_version FROM msg_event"
             " WHERE topic = 'schd' AND event_id <= %s ORDER BY flid, event_id DESC")
    with psycopg.connect(dsn) as conn:
        return dict(conn.execute(query, (watermark(dsn),)).fetchall())


def caught_up(projection: DictProjection, latest: dict[str, int]) -> bool:
    seen = projection.seen
    return all(f in seen and seen[f].state_version >= v for f, v in latest.items())


def outage(broker: TansuBroker, dsn: str, settings: KafkaSettings, model: EventModel,
           log: Path) -> None:
    """Broker stopped with a dispatcher running and new rows waiting; then started again."""
    broker.stop()
    before = watermark(dsn)
    insert_rows(dsn, model.next_rows(500))
    proc = DispatcherProcess(dsn, settings, log)
    time.sleep(4.0)  # it retries against the dead broker meanwhile
    assert watermark(dsn) == before  # the watermark never moves without the broker
    broker.start()
    provision_topics(settings, TopicSettings(partitions=3))
    time.sleep(random.uniform(0.5, 3.0))
    proc.kill()


def test_dispatcher_crashes_and_broker_restart_lose_nothing(
    tansu_broker: TansuBroker, outbox_dsn: str
) -> None:
    random.seed(20)
    settings = make_settings(tansu_broker.bootstrap)
    model = EventModel(flids=200, seed=11)
    projection = DictProjection()
    log = Path(tempfile.mkstemp(prefix="fs-dispatcher-", suffix=".log")[1])
    consumer = assigned_consumer(tansu_broker.bootstrap, settings.topics["schd"], projection)
    interrupted = 0  # kills that left work behind (mid-batch or before reaching it)
    try:
        for kill in range(KILLS):
            if kill == RESTART_AT:
                latest = dispatched_latest(outbox_dsn)
                assert consume_until(consumer, lambda seen=latest: caught_up(projection, seen))
                consumer.close()
                outage(tansu_broker, outbox_dsn, settings, model, log)
                consumer = assigned_consumer(tansu_broker.bootstrap, settings.topics["schd"],
                                             projection)
                continue
            insert_rows(outbox_dsn, model.next_rows(1500))
            proc = DispatcherProcess(outbox_dsn, settings, log)
            time.sleep(random.uniform(0.2, 1.8))
            proc.kill()
            interrupted += undelivered(outbox_dsn) > 0
            consumer.poll(0.2)
        final = DispatcherProcess(outbox_dsn, settings, log)
        deadline = time.monotonic() + 120
        while undelivered(outbox_dsn) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert final.terminate() == 0
        assert undelivered(outbox_dsn) == 0
        expected = expected_projection(outbox_dsn)
        assert consume_until(consumer, lambda: projection.flights == expected, timeout=90)
    finally:
        with contextlib.suppress(RuntimeError):  # already closed if the outage step failed
            consumer.close()
    deleted = set(model.flids) - set(expected)
    assert all(projection.seen[f].deleted for f in deleted if f in model.version)
    assert interrupted >= 5  # the crashes really hit a busy dispatcher
    log.unlink(missing_ok=True)

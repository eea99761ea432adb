"""Crash test: a dispatcher process SIGKILLed at random points 20 times, the broker
stopped and restarted once, while a generated airport day is pumped through the real
service into PostgreSQL; the consumer helper's projection ends equal to the PostgreSQL
state of every flight (its wire form; deleted flights absent).

tansu keeps records in memory only, so a restart loses what the consumer had not read.
Before stopping it the test lets the consumer catch up with everything at or below the
dispatch watermark (a durable Kafka would not need that); what it checks across the
outage is the dispatcher: the watermark does not move while the broker is down, and
delivery resumes with a rebuilt producer (an idempotent producer does not survive a
tansu restart).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.records import InboxRow
from flightstate_core.domain.wire import wire
from flightstate_core.engine import service
from flightstate_kafka import DictProjection, KafkaSettings, TopicSettings, provision_topics
from flightstate_pg import PgStore
from flightstate_testing.traffic import generate_day
from tests.fixtures.kafka import TansuBroker
from tests.kafka._consume import assigned_consumer, consume_until
from tests.kafka._outbox_db import expected_projection, undelivered, watermark
from tests.kafka.conftest import make_settings

pytestmark = [pytest.mark.pg, pytest.mark.kafka, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
KILLS = 20
RESTART_AT = 10


class PumpedDay:
    """A generated day applied by the real service, a slice at a time: the outbox rows
    the dispatcher sees are exactly what the pump committed."""

    def __init__(self, dsn: str, messages: int) -> None:
        self.raws = generate_day(seed=20, flights=200, messages=messages)
        self.applied = 0
        self.store = PgStore(dsn)

    def pump(self, count: int) -> None:
        chunk = self.raws[self.applied : self.applied + count]
        rows = [InboxRow(self.applied + n, raw) for n, raw in enumerate(chunk, 1)]
        for start in range(0, len(rows), 200):
            service.process_batch(self.store, rows[start : start + 200], CoreConfig(),
                                  now=datetime.now(UTC), epoch=None)  # fmt: skip
        self.applied += len(chunk)

    def stored_projection(self) -> tuple[dict[str, Any], set[str]]:
        """(wire form of every ACTIVE flight as JSON, FLIDs of DELETED flights)."""
        states = list(self.store.iter_flights())
        active = {s.flid: json.loads(wire(s, CoreConfig())) for s in states if not s.is_deleted}
        return active, {s.flid for s in states if s.is_deleted}


class DispatcherProcess:
    """``tests.kafka.dispatcher_proc`` as a child process, ended by PID."""

    def __init__(self, dsn: str, settings: KafkaSettings, log: Path) -> None:
        argv = [
            sys.executable,
            "-m",
            "tests.kafka.dispatcher_proc",
            dsn,
            settings.bootstrap_servers,
            settings.topics["schd"],
            settings.topics["msg"],
            "50",
        ]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        with log.open("ab") as out:
            self.proc = subprocess.Popen(
                argv, cwd=ROOT, env=env, stdout=out, stderr=out, stdin=subprocess.DEVNULL
            )

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
    query = (
        "SELECT DISTINCT ON (flid) flid, state_version FROM msg_event"
        " WHERE topic = 'schd' AND event_id <= %s ORDER BY flid, event_id DESC"
    )
    with psycopg.connect(dsn) as conn:
        return dict(conn.execute(query, (watermark(dsn),)).fetchall())


def caught_up(projection: DictProjection, latest: dict[str, int]) -> bool:
    seen = projection.seen
    return all(f in seen and seen[f].state_version >= v for f, v in latest.items())


def outage(
    broker: TansuBroker, dsn: str, settings: KafkaSettings, day: PumpedDay, log: Path
) -> None:
    """Broker stopped with a dispatcher running and new rows waiting; then started again."""
    broker.stop()
    before = watermark(dsn)
    day.pump(250)
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
    day = PumpedDay(outbox_dsn, messages=KILLS * 650 + 250)
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
                outage(tansu_broker, outbox_dsn, settings, day, log)
                consumer = assigned_consumer(
                    tansu_broker.bootstrap, settings.topics["schd"], projection
                )
                continue
            day.pump(650)
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
        expected, deleted = day.stored_projection()
        assert expected_projection(outbox_dsn) == expected  # the outbox agrees with the store
        assert consume_until(consumer, lambda: projection.flights == expected, timeout=90)
    finally:
        with contextlib.suppress(RuntimeError):  # already closed if the outage step failed
            consumer.close()
        day.store.close()
    assert deleted, "the generated day deletes some flights"
    assert all(projection.seen[f].deleted for f in deleted if f in projection.seen)
    assert interrupted >= 5  # the crashes really hit a busy dispatcher
    log.unlink(missing_ok=True)

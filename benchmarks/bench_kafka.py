"""Outbox dispatch throughput vs raw confluent-kafka production of the same payloads.

One run, side by side, against a private tansu broker (memory storage) and a throwaway
PostgreSQL database (FLIGHTSTATE_TEST_PG_DSN, default postgres@127.0.0.1:5432/test):

- raw: the same payloads produced by one producer (the dispatcher's configuration:
  acks=all, idempotence), then flush, counting delivery reports;
- dispatch: MSG_EVENT rows → Dispatcher (fetch, produce, await reports, mark) until the
  backlog is empty. Every ``schd`` row has its own FLID, so nothing is coalesced.

Targets: dispatch ≥ 50 % of raw and ≥ 20,000 events/s.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from confluent_kafka import Producer

from flightstate_kafka import Dispatcher, KafkaSettings, TopicSettings, provision_topics
from flightstate_kafka.producer import producer_config
from flightstate_pg.outbox import PgOutbox
from tests.fixtures.kafka import TansuBroker
from tests.fixtures.postgres import create_database, drop_database
from tests.kafka._outbox_db import create_outbox_schema

EVENTS = int(os.environ.get("BENCH_KAFKA_EVENTS", "100000"))
BATCH = int(os.environ.get("BENCH_KAFKA_BATCH", "5000"))
PG = os.environ.get("FLIGHTSTATE_TEST_PG_DSN") or "postgresql://postgres@127.0.0.1:5432/test"
_COPY = ("COPY msg_event (topic, event_key, payload, flid, state_version, kind, message_id)"
         " FROM STDIN")


def payload(flid: str, n: int) -> str:
    """A wire-like ``schd`` value: fixed keys, most scalars null, two collections (~1.5 KB)."""
    state: dict[str, object] = {"flid": flid, "state": "ACTIVE", "stateVersion": 1,
                                "updatedAt": "2026-11-30T09:00:00+00:00",
                                "operationDay": "2026-11-30", "lastMessageId": n}
    state.update({f"S{i:03d}": (None if i % 3 else f"V{i}") for i in range(60)})
    state["GTDT"] = [{"ordinal": 1, "seq": "1", "GATE": "G28", "PGOT": "30NOV260900",
                      "PGOT_TS": "2026-11-30T09:00:00+08:00", "PGCT": None}]
    state["CKDT"] = [{"ordinal": i, "seq": str(i), "CKNO": f"C{i}"} for i in range(1, 6)]
    return json.dumps(state, separators=(",", ":"))


def rows() -> list[tuple[object, ...]]:
    """EVENTS outbox rows: alternating schd snapshots and msg notifications."""
    out: list[tuple[object, ...]] = []
    for n in range(EVENTS // 2):
        flid = f"B{n:07d}"
        out.append(("schd", flid, payload(flid, n), flid, 1, "SNAPSHOT", n))
        note = json.dumps({"flid": flid, "stateVersion": 1, "change": "CREATED",
                           "changed": [], "messageId": n, "type": "SCHD", "styp": "DNLD"})
        out.append(("msg", flid, note, flid, 1, "NOTIFY", n))
    return out


def raw_rate(settings: KafkaSettings, data: list[tuple[object, ...]]) -> float:
    """Events/s of plain production of the same records (topic, key, value) and flush."""
    producer = Producer(producer_config(settings))
    delivered = 0

    def report(err: object, _msg: object) -> None:
        nonlocal delivered
        delivered += err is None

    start = time.perf_counter()
    for topic, key, value, *_ in data:
        while True:
            try:
                producer.produce(settings.topics[str(topic)], value=str(value).encode(),
                                 key=str(key).encode(), on_delivery=report)
                break
            except BufferError:
                producer.poll(0.01)
    producer.flush(120)
    elapsed = time.perf_counter() - start
    assert delivered == len(data), f"raw: {delivered} of {len(data)} delivered"
    return len(data) / elapsed


def dispatch_rate(dsn: str, settings: KafkaSettings, data: list[tuple[object, ...]]) -> float:
    """Events/s from a full MSG_EVENT to an empty backlog through the Dispatcher."""
    with psycopg.connect(dsn) as conn, conn.cursor().copy(_COPY) as copy:
        for row in data:
            copy.write_row(row)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("ANALYZE msg_event")  # steady state: autovacuum has statistics
    outbox = PgOutbox(dsn)
    dispatcher = Dispatcher(outbox, settings)
    try:
        start = time.perf_counter()
        moved = 0
        while (step := dispatcher.dispatch_once()) > 0:
            moved += step
        elapsed = time.perf_counter() - start
    finally:
        dispatcher.close()
        outbox.close()
    assert moved == len(data), f"dispatch: {moved} of {len(data)} marked"
    return len(data) / elapsed


def main() -> None:
    """Run both measurements once and print them side by side."""
    data = rows()
    dsn = create_database(PG)
    try:
        create_outbox_schema(dsn)
        with TansuBroker() as broker:
            raw_settings = KafkaSettings(broker.bootstrap, topics={"schd": "raw_schd",
                                                                   "msg": "raw_msg"})
            settings = KafkaSettings(broker.bootstrap, batch_size=BATCH)
            for s in (raw_settings, settings):
                provision_topics(s, TopicSettings(partitions=6))
            raw = raw_rate(raw_settings, data)
            dispatched = dispatch_rate(dsn, settings, data)
    finally:
        drop_database(PG, dsn)
    size = sum(len(str(r[2])) for r in data) / len(data)
    print(f"bench_kafka: {len(data):,} events (avg value {size:.0f} B), batch {BATCH}")
    print(f"{'path':<32}{'events/s':>12}{'vs raw':>10}")
    print(f"{'raw confluent-kafka':<32}{raw:>12,.0f}{1.0:>10.2f}")
    print(f"{'outbox dispatch (PG→Kafka)':<32}{dispatched:>12,.0f}{dispatched / raw:>10.2f}")
    verdict = "met" if dispatched >= max(20_000, raw / 2) else "NOT met"
    print(f"targets (>= 20,000/s and >= 50% of raw): {verdict}")


if __name__ == "__main__":
    main()

"""Outbox dispatch throughput vs raw confluent-kafka production of the same payloads.

One run, side by side, against a private tansu broker (memory storage) and a throwaway
PostgreSQL database (FLIGHTSTATE_TEST_PG_DSN, default postgres@127.0.0.1:5432/test):

- raw: the same payloads (topic, key, value) produced by one producer with the
  dispatcher's configuration (acks=all, idempotence, gapless), no headers, a Python
  delivery callback per record, then flush;
- dispatch: the same rows COPYed into MSG_EVENT, then Dispatcher.dispatch_once until the
  backlog is empty (read from the watermark, plan, produce with headers, await reports,
  move the watermark). Every ``schd`` row has its own FLID, so nothing is coalesced.

BENCH_KAFKA_COMPRESSION sets the producer's ``compression.type`` of both paths (default:
the dispatcher's own, ``producer_config``), to compare codecs.

The machine is shared, so raw and dispatch alternate for BENCH_KAFKA_ROUNDS rounds (3)
and the table shows every round and the medians; the ratio is median / median.
Targets: dispatch ≥ 50 % of raw and ≥ 20,000 events/s.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from confluent_kafka import Producer

from flightstate_kafka import Dispatcher, KafkaSettings, TopicSettings, provision_topics
from flightstate_kafka.producer import producer_config
from flightstate_pg import migrate
from flightstate_pg.outbox import PgOutbox
from flightstate_testing.kafka import TansuBroker
from flightstate_testing.postgres import create_database, drop_database

EVENTS = int(os.environ.get("BENCH_KAFKA_EVENTS", "100000"))
ROUNDS = int(os.environ.get("BENCH_KAFKA_ROUNDS", "3"))
BATCH = int(os.environ.get("BENCH_KAFKA_BATCH", "5000"))
CODEC = os.environ.get("BENCH_KAFKA_COMPRESSION")
_OVERRIDES = {"compression.type": CODEC} if CODEC else {}
PG = os.environ.get("FLIGHTSTATE_TEST_PG_DSN") or "postgresql://postgres@127.0.0.1:5432/test"
_COPY = (
    "COPY msg_event (topic, event_key, payload, flid, state_version, kind, message_id) FROM STDIN"
)


def payload(flid: str, n: int) -> str:
    """A wire-like ``schd`` value: fixed keys, most scalars null, two collections (~1.5 KB)."""
    state: dict[str, object] = {
        "flid": flid,
        "state": "ACTIVE",
        "stateVersion": 1,
        "updatedAt": "2026-11-30T09:00:00+00:00",
        "operationDay": "2026-11-30",
        "lastMessageId": n,
    }
    state.update({f"S{i:03d}": (None if i % 3 else f"V{i}") for i in range(60)})
    state["GTDT"] = [
        {
            "ordinal": 1,
            "seq": "1",
            "GATE": "G28",
            "PGOT": "30NOV260900",
            "PGOT_TS": "2026-11-30T09:00:00+08:00",
            "PGCT": None,
        }
    ]
    state["CKDT"] = [{"ordinal": i, "seq": str(i), "CKNO": f"C{i}"} for i in range(1, 6)]
    return json.dumps(state, separators=(",", ":"))


def rows() -> list[tuple[object, ...]]:
    """EVENTS outbox rows: alternating schd snapshots and msg notifications."""
    out: list[tuple[object, ...]] = []
    for n in range(EVENTS // 2):
        flid = f"B{n:07d}"
        out.append(("schd", flid, payload(flid, n), flid, 1, "SNAPSHOT", n))
        note = json.dumps(
            {
                "flid": flid,
                "stateVersion": 1,
                "change": "CREATED",
                "changed": [],
                "messageId": n,
                "type": "SCHD",
                "styp": "DNLD",
            }
        )
        out.append(("msg", flid, note, flid, 1, "NOTIFY", n))
    return out


def raw_rate(settings: KafkaSettings, data: list[tuple[object, ...]]) -> float:
    """Events/s of plain production of the same records (topic, key, value) and flush."""
    producer = Producer(producer_config(settings))
    delivered = 0

    def report(err: object, _msg: object) -> None:
        nonlocal delivered
        delivered += err is None

    records = [(settings.topics[str(t)], str(v).encode(), str(k).encode()) for t, k, v, *_ in data]
    start = time.perf_counter()
    for topic, value, key in records:
        while True:
            try:
                producer.produce(topic, value, key, on_delivery=report)
                break
            except BufferError:
                producer.poll(0.01)
    producer.flush(120)
    elapsed = time.perf_counter() - start
    assert delivered == len(data), f"raw: {delivered} of {len(data)} delivered"
    return len(data) / elapsed


def load_outbox(dsn: str, data: list[tuple[object, ...]]) -> None:
    """COPY the rows into MSG_EVENT (not timed) and refresh the statistics."""
    with psycopg.connect(dsn) as conn, conn.cursor().copy(_COPY) as copy:
        for row in data:
            copy.write_row(row)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("ANALYZE msg_event")  # steady state: autovacuum has statistics


def dispatch_rate(dsn: str, settings: KafkaSettings, data: list[tuple[object, ...]]) -> float:
    """Events/s from a full MSG_EVENT to an empty backlog through the Dispatcher."""
    load_outbox(dsn, data)
    outbox = PgOutbox(dsn)
    dispatcher = Dispatcher(outbox, settings)
    try:
        start = time.perf_counter()
        moved = 0
        while (step := dispatcher.dispatch_once()) > 0:
            moved += step
        elapsed = time.perf_counter() - start
        backlog = outbox.backlog().count
    finally:
        dispatcher.close()
        outbox.close()
    assert moved == len(data), f"dispatch: {moved} of {len(data)} settled"
    assert backlog == 0, f"dispatch: {backlog} rows left above the watermark"
    return len(data) / elapsed


def measure(
    broker: TansuBroker, dsn: str, data: list[tuple[object, ...]]
) -> tuple[list[float], list[float]]:
    """ROUNDS alternating (raw, dispatch) measurements on fresh topics."""
    raws: list[float] = []
    dispatched: list[float] = []
    for n in range(ROUNDS):
        raw_settings = KafkaSettings(
            broker.bootstrap,
            producer_overrides=_OVERRIDES,
            topics={"schd": f"raw_schd{n}", "msg": f"raw_msg{n}"},
        )
        settings = KafkaSettings(
            broker.bootstrap,
            batch_size=BATCH,
            producer_overrides=_OVERRIDES,
            topics={"schd": f"schd{n}", "msg": f"msg{n}"},
        )
        for s in (raw_settings, settings):
            provision_topics(s, TopicSettings(partitions=6))
        raws.append(raw_rate(raw_settings, data))
        dispatched.append(dispatch_rate(dsn, settings, data))
    return raws, dispatched


def main() -> None:
    """Run both measurements ROUNDS times, alternating, and print them side by side."""
    data = rows()
    dsn = create_database(PG)
    try:
        migrate(dsn)  # MSG_EVENT, OUTBOX_WATERMARK, ...
        with TansuBroker() as broker:
            raws, dispatched = measure(broker, dsn, data)
    finally:
        drop_database(PG, dsn)
    size = sum(len(str(r[2])) for r in data) / len(data)
    raw, disp = statistics.median(raws), statistics.median(dispatched)
    print(
        f"bench_kafka: {len(data):,} events (avg value {size:.0f} B), batch {BATCH}, "
        f"{ROUNDS} alternating rounds, compression {CODEC or 'default'}"
    )
    print(
        f"{'path':<30}"
        + "".join(f"{f'round {n + 1}':>11}" for n in range(ROUNDS))
        + f"{'median':>11}{'vs raw':>8}"
    )
    for name, values, ratio in (
        ("raw confluent-kafka (ev/s)", raws, 1.0),
        ("outbox dispatch PG→Kafka", dispatched, disp / raw),
    ):
        cells = "".join(f"{v:>11,.0f}" for v in values)
        print(f"{name:<30}{cells}{statistics.median(values):>11,.0f}{ratio:>8.2f}")
    per_round = ", ".join(f"{d / r:.2f}" for r, d in zip(raws, dispatched, strict=True))
    print(f"dispatch/raw per round: {per_round}")
    verdict = "met" if disp >= max(20_000, raw / 2) else "NOT met"
    print(f"targets (median >= 20,000/s and >= 50% of median raw): {verdict}")


if __name__ == "__main__":
    main()

"""The probes of ``bench_latency.py`` that talk to Kafka and PostgreSQL directly: the
``schd`` watcher and the floor (a durable commit, a produce → consume round trip)."""

from __future__ import annotations

import threading
import time

import psycopg
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from latency_table import FloorRow, Percentiles

from flightstate_kafka import KafkaSettings
from flightstate_kafka.producer import producer_config
from flightstate_testing.kafka import create_topic
from flightstate_testing.names import unique_name

__all__ = [
    "CONSUMER_FETCH", "FLOOR", "FLOOR_TX", "SchdWatcher", "assigned_consumer",
    "durable_commits", "floor", "round_trips",
]  # fmt: skip

#: The bench consumer's fetch settings: answer as soon as one record is there, and never
#: park a fetch for long (librdkafka's default fetch.wait.max.ms is 500).
CONSUMER_FETCH = {"fetch.wait.max.ms": "5", "fetch.min.bytes": "1"}


def assigned_consumer(bootstrap: str, topic: str) -> Consumer:
    """A consumer assigned to every partition of *topic* from the start (no group join:
    tansu's takes about 20 s), with the bench's fetch settings."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique_name("fs_lat"),
                         "enable.auto.commit": False, "isolation.level": "read_committed",
                         **CONSUMER_FETCH})  # fmt: skip
    partitions = consumer.list_topics(topic, timeout=30).topics[topic].partitions
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in sorted(partitions)])
    return consumer


class SchdWatcher(threading.Thread):
    """Notes when the ``schd`` record of each message id (its ``message-id`` header) arrives."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        super().__init__(name="schd-watcher", daemon=True)
        self.seen: dict[int, float] = {}
        self._consumer = assigned_consumer(bootstrap, topic)
        self._done = threading.Event()

    def run(self) -> None:
        consumer, seen = self._consumer, self.seen
        while not self._done.is_set():
            # poll returns at the first record; consume(n, timeout) would wait out its
            # whole timeout unless n records came, adding up to that much to every sample.
            first = consumer.poll(0.05)
            at = time.time()
            if first is None:
                continue
            records = [first, *consumer.consume(1000, 0)]
            for record in records:
                if record.error() is None:
                    message_id = dict(record.headers() or []).get("message-id")
                    if message_id is not None:
                        seen.setdefault(int(message_id), at)
        consumer.close()

    def stop(self) -> None:
        """Stop reading and close the consumer."""
        self._done.set()
        self.join(10)


def durable_commits(dsn: str, count: int) -> list[float]:
    """Seconds of *count* one-row durable commits (``synchronous_commit = on``)."""
    samples: list[float] = []
    with psycopg.connect(dsn) as conn:
        conn.execute("SET synchronous_commit = on")
        conn.execute("CREATE TABLE bench_latency_probe (n integer)")
        conn.commit()
        for n in range(count):
            started = time.time()
            conn.execute("INSERT INTO bench_latency_probe (n) VALUES (%s)", (n,))
            conn.commit()
            samples.append(time.time() - started)
        conn.execute("DROP TABLE bench_latency_probe")
        conn.commit()
    return samples


def round_trips(bootstrap: str, count: int, *, transactional: bool = False) -> list[float]:
    """Seconds of *count* produce → consume round trips of one small record each, with the
    dispatcher's producer settings (acks=all, idempotent) and the bench's consumer; with
    *transactional*, each record in a Kafka transaction of its own, as the dispatcher
    fences its windows (its begin, the partition's registration, the commit marker that
    a read_committed consumer waits for)."""
    topic = unique_name("floor")
    create_topic(bootstrap, topic)
    quiet = KafkaSettings(bootstrap, producer_overrides={"log_level": "3"})
    config = producer_config(quiet)
    if transactional:
        config = {**config, "transactional.id": unique_name("floor-tx")}
        config.pop("enable.gapless.guarantee", None)  # idempotent-only property
    producer = Producer(config)
    if transactional:
        producer.init_transactions(30)
    reader = assigned_consumer(bootstrap, topic)
    samples: list[float] = []
    try:
        for n in range(count + 1):  # the first one connects: not counted
            started = time.time()
            if transactional:
                producer.begin_transaction()
            producer.produce(topic, b"%d" % n, b"k")
            if transactional:
                producer.commit_transaction(10)
            else:
                producer.flush(10)
            while (record := reader.poll(0.05)) is None or record.error() is not None:
                if time.time() - started > 30:  # noqa: PLR2004 - a broken broker, not a sample
                    raise RuntimeError("floor record not consumed within 30 s")
            if n:
                samples.append(time.time() - started)
    finally:
        reader.close()
    return samples


def floor(pg: str, bootstrap: str, count: int) -> list[FloorRow]:
    """The floor rows: a durable commit, a round trip, and one of each back to back; then
    the same with the round trip in a Kafka transaction (the dispatcher's own floor)."""
    commits, trips = durable_commits(pg, count), round_trips(bootstrap, count)
    in_tx = round_trips(bootstrap, count, transactional=True)
    both = [c + t for c, t in zip(commits, trips, strict=True)]
    both_tx = [c + t for c, t in zip(commits, in_tx, strict=True)]
    commit = Percentiles.of(commits)
    return [("PG durable commit", commit, None),
            ("produce -> consume", None, Percentiles.of(trips)),
            (FLOOR, commit, Percentiles.of(both)),
            ("transactional produce -> consume", None, Percentiles.of(in_tx)),
            (FLOOR_TX, commit, Percentiles.of(both_tx))]  # fmt: skip


#: The floor the freshness targets are ratios of, and the same with Kafka transactions.
FLOOR = "commit + produce -> consume"
FLOOR_TX = "commit + transactional produce -> consume"

"""Reading helpers: consume until what is expected was seen, with a deadline (tansu's
high watermark is unreliable, so "end of topic" is never used)."""

from __future__ import annotations

import time
from collections.abc import Callable

from confluent_kafka import Consumer, Message, TopicPartition

from flightstate_kafka import Dispatcher, ProjectionConsumer
from tests.fixtures.util import unique_name


def assigned_consumer(bootstrap: str, topic: str, projection: object) -> ProjectionConsumer:
    """A consumer helper reading every partition of *topic* from offset 0."""
    conf = {"bootstrap.servers": bootstrap, "group.id": unique_name("fs_test")}
    return ProjectionConsumer(conf, topic, projection, subscribe=False)  # type: ignore[arg-type]


def consume_until(
    consumer: ProjectionConsumer, done: Callable[[], bool], timeout: float = 60.0
) -> bool:
    """Poll until ``done()`` or the deadline; return ``done()``."""
    deadline = time.monotonic() + timeout
    while not done() and time.monotonic() < deadline:
        consumer.poll(0.5)
    return done()


def drain(dispatcher: Dispatcher, rounds: int = 1000) -> int:
    """Dispatch batches until the outbox is empty; return the rows settled."""
    total = 0
    for _ in range(rounds):
        moved = dispatcher.dispatch_once()
        if moved == 0:
            return total
        total += moved
    raise AssertionError("outbox did not drain")


def read_until(
    bootstrap: str, topic: str, done: Callable[[list[Message]], bool], timeout: float = 30.0
) -> list[Message]:
    """Raw records of *topic* from offset 0 until ``done(records)`` or the deadline."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique_name("fs_raw"),
            "enable.auto.commit": False,
        }
    )
    records: list[Message] = []
    try:
        partitions = consumer.list_topics(topic, timeout=timeout).topics[topic].partitions
        consumer.assign([TopicPartition(topic, p, 0) for p in sorted(partitions)])
        deadline = time.monotonic() + timeout
        while not done(records) and time.monotonic() < deadline:
            records.extend(m for m in consumer.consume(500, 0.5) if m.error() is None)
    finally:
        consumer.close()
    return records

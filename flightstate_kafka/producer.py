"""The producer factory: one place that decides how flightstate talks to the broker.

Why the settings are what they are:

- ``acks=all`` + ``enable.idempotence=true``: a record is acknowledged only once every
  in-sync replica has it, and retries never duplicate or reorder within a partition.
- ``max.in.flight.requests.per.connection`` ≤ 5 keeps idempotent ordering guarantees.
- ``enable.gapless.guarantee``: if a record of a partition fails while a later one could
  still succeed, librdkafka raises a fatal error instead of leaving a gap. A gap would
  make the dispatcher publish an older ``schd`` version after a newer one on retry.
- ``partitioner=murmur2_random``: the same key→partition mapping as the Java client, so
  every producer of a FLID agrees on its partition.
- ``linger.ms=1``, ``batch.num.messages=10000``, ``batch.size=1 MiB``: latency at low
  rates, batches at catch-up. A window of a live trickle is one or a few records and the
  dispatcher waits for their reports, so the linger is added to every change's freshness
  (measured on tansu: 5 ms linger → 6.1 ms from produce to the last report, 1 ms → 1.6 ms).
  A catch-up window produces thousands of records in a tight loop, so a batch fills from
  the queue long before 1 ms passes and the size limits, not the linger, end it
  (``bench_kafka``: the same dispatch rate with linger 5, 1 and 0, within this machine's
  noise). 0 would save about another millisecond at the cost of one request per record
  while the queue trickles (docs/design.md, "Freshness").
- ``compression.type=zstd``: chosen by measurement on real ``schd`` payloads
  (``benchmarks/bench_compression.py``; docs/design.md, "Outbox dispatch").
- ``message.max.bytes`` is ``KafkaSettings.max_record_bytes`` (librdkafka checks it per
  record before compression) and ``batch.size`` at most that: the one size setting, which
  the topics ``provision_topics`` creates also follow. An override may not set them.
- A producer is disposable: after a fatal error (or, on tansu, after a broker restart,
  which an idempotent producer does not survive) the dispatcher builds a new one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from confluent_kafka import Producer

from flightstate_core.domain.errors import ConfigError
from flightstate_kafka.settings import KafkaSettings

__all__ = ["PINNED", "SIZED", "ProducerFactory", "build_producer", "producer_config"]

#: Properties an override may not change: they carry the delivery guarantees.
PINNED: Mapping[str, str] = {
    "acks": "all",
    "enable.idempotence": "true",
    "enable.gapless.guarantee": "true",
}

#: Properties that follow ``KafkaSettings.max_record_bytes`` (an override may not set them).
SIZED = frozenset({"message.max.bytes", "batch.size"})

_BATCH_BYTES = 1_048_576  # a catch-up batch; never above the record limit

_DEFAULTS: Mapping[str, str] = {
    "max.in.flight.requests.per.connection": "5",
    "linger.ms": "1",
    "batch.num.messages": "10000",
    "queue.buffering.max.messages": "200000",
    "compression.type": "zstd",
    "partitioner": "murmur2_random",
    "retry.backoff.ms": "100",
    "socket.keepalive.enable": "true",
    "log.connection.close": "false",
}

#: Builds a producer from its librdkafka configuration (tests may wrap it).
ProducerFactory = Callable[[Mapping[str, str]], Producer]


def producer_config(settings: KafkaSettings) -> dict[str, str]:
    """librdkafka configuration of the dispatcher's producer (defaults, overrides, pins)."""
    conf: dict[str, str] = {
        "bootstrap.servers": settings.bootstrap_servers,
        "client.id": settings.client_id,
        "message.timeout.ms": str(int(settings.delivery_timeout_s * 1000)),
        **_DEFAULTS,
        "message.max.bytes": str(settings.max_record_bytes),
        "batch.size": str(min(_BATCH_BYTES, settings.max_record_bytes)),
    }
    for key, value in settings.producer_overrides.items():
        if key in SIZED:
            raise ConfigError(
                f"kafka.producer_overrides: {key} follows kafka.max_record_bytes; set that instead"
            )
        if key in PINNED and str(value).lower() != PINNED[key]:
            raise ConfigError(f"kafka.producer_overrides: {key} is pinned to {PINNED[key]}")
        conf[key] = str(value)
    conf.update(PINNED)
    inflight = int(conf["max.in.flight.requests.per.connection"])
    if not 1 <= inflight <= 5:  # noqa: PLR2004 - librdkafka's idempotence limit
        raise ConfigError("max.in.flight.requests.per.connection must be 1..5 with idempotence")
    return conf


def build_producer(conf: Mapping[str, str]) -> Producer:
    """The default ``ProducerFactory``: a plain ``confluent_kafka.Producer``."""
    return Producer(dict(conf))

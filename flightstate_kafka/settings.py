"""Settings of the Kafka side: broker, topic names, producer tuning, dispatcher pacing."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from attrs import field, frozen

from flightstate_core.domain.errors import ConfigError

__all__ = ["LOGICAL_TOPICS", "RECORD_ALLOWANCE_BYTES", "KafkaSettings", "TopicSettings"]

#: Logical topic names stored in MSG_EVENT.TOPIC.
LOGICAL_TOPICS = ("schd", "msg")

#: What a record adds to its payload within ``max_record_bytes``: the key (a FLID, at most
#: 64 bytes) and the headers (``record_headers`` plus the epoch: about 120 bytes), rounded
#: up. The dispatcher parks a payload over ``max_record_bytes - RECORD_ALLOWANCE_BYTES``.
RECORD_ALLOWANCE_BYTES = 512
_MAX_RECORD_LIMIT = 1_000_000_000  # librdkafka's largest message.max.bytes


def _frozen_map(value: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(value))


@frozen
class TopicSettings:
    """How ``provision_topics`` creates the two topics.

    ``schd`` is compacted (the latest state per FLID); ``min_compaction_lag_ms`` keeps
    recent versions readable before compaction, ``delete_retention_ms`` is how long a
    tombstone stays visible to consumers that lag. ``msg`` is time-retained.
    """

    partitions: int = 6
    replication_factor: int = 1
    min_insync_replicas: int | None = None
    schd_min_compaction_lag_ms: int = 60 * 60 * 1000
    schd_delete_retention_ms: int = 7 * 24 * 60 * 60 * 1000
    msg_retention_ms: int = 7 * 24 * 60 * 60 * 1000

    def __attrs_post_init__(self) -> None:
        if self.partitions < 1 or self.replication_factor < 1:
            raise ConfigError("topics: partitions and replication_factor must be >= 1")


@frozen
class KafkaSettings:
    """Broker address, logical→Kafka topic names, producer overrides, dispatcher pacing.

    - ``topics``: MSG_EVENT.TOPIC (``schd``/``msg``) → Kafka topic name.
    - ``producer_overrides``: librdkafka properties applied over the defaults of
      ``flightstate_kafka.producer.producer_config`` (acks/idempotence cannot be weakened).
    - ``batch_size``: outbox rows fetched per batch.
    - ``pipeline_depth``: batches per window: read (one ahead, on a worker thread) and
      produced back to back; then the window's reports are awaited and the watermark
      moves once. 1 = strictly one batch at a time.
    - ``delivery_timeout_s``: librdkafka ``message.timeout.ms``; an undelivered record
      fails after it and is retried from the outbox by a rebuilt producer.
    - ``stuck_after_s``: no delivery report for this long while records are outstanding →
      the producer is abandoned and rebuilt.
    - ``flush_timeout_s``: deadline of the final flush on shutdown.
    - ``idle_sleep_s`` / ``max_backoff_s``: pacing when the outbox is empty / after errors.
    - ``transactional_id``: produce each window in a Kafka transaction under this id. The
      broker then fences every older producer of the same id once a new one initialises
      (``init_transactions``): a dispatcher that was paused and replaced can publish
      nothing more (see ``Dispatcher``). None: idempotent, non-transactional producing.
    - ``outage_log_every_s``: while the broker stays unreachable, one summary line per this
      many seconds (plus one line when the outage starts and one when it ends).
    - ``max_record_bytes``: the largest record (payload, key and headers, before
      compression) the dispatcher sends. The one size setting: the producer's
      ``message.max.bytes`` and the ``max.message.bytes`` of the topics ``provision_topics``
      creates follow it. A larger payload is parked, not sent (docs/design.md, "Outbox
      dispatch"). The default fits every broker's default limit.
    """

    bootstrap_servers: str
    topics: Mapping[str, str] = field(
        factory=lambda: {"schd": "schd", "msg": "msg"}, converter=_frozen_map
    )
    producer_overrides: Mapping[str, str] = field(factory=dict, converter=_frozen_map)
    client_id: str = "flightstate-dispatcher"
    batch_size: int = 5000
    pipeline_depth: int = 4
    coalesce: bool = True
    delivery_timeout_s: float = 30.0
    stuck_after_s: float = 60.0
    flush_timeout_s: float = 10.0
    idle_sleep_s: float = 0.2
    max_backoff_s: float = 5.0
    transactional_id: str | None = None
    outage_log_every_s: float = 60.0
    max_record_bytes: int = 1_000_000

    def __attrs_post_init__(self) -> None:
        missing = [name for name in LOGICAL_TOPICS if not self.topics.get(name)]
        if missing:
            raise ConfigError(f"kafka.topics: no Kafka topic configured for {missing}")
        if self.batch_size < 1 or self.pipeline_depth < 1:
            raise ConfigError("kafka.batch_size and kafka.pipeline_depth must be >= 1")
        if self.delivery_timeout_s <= 0 or self.stuck_after_s <= 0:
            raise ConfigError("kafka.delivery_timeout_s and stuck_after_s must be positive")
        if not self.outage_log_every_s > 0:  # also refuses NaN
            raise ConfigError("kafka.outage_log_every_s must be positive")
        if not 4 * RECORD_ALLOWANCE_BYTES <= self.max_record_bytes <= _MAX_RECORD_LIMIT:
            raise ConfigError(
                f"kafka.max_record_bytes must be {4 * RECORD_ALLOWANCE_BYTES}.."
                f"{_MAX_RECORD_LIMIT} (librdkafka's message.max.bytes range)"
            )

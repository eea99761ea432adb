"""Topic provisioning (``runner.py topics``): ``schd`` compacted, ``msg`` time-retained.

Idempotent: an existing topic is left as it is and reported. tansu (the test broker)
accepts the configs on creation but does not compact; a real Kafka cluster applies them.

A broker that does not answer is one short error naming the bootstrap servers, after one
metadata request of ``timeout`` seconds: librdkafka's own log (a line per reconnect attempt,
hundreds in 30 s) goes to the ``flightstate.kafka.librdkafka`` logger, which shows only
critical lines, instead of stderr.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

from flightstate_core.domain.errors import TransientError
from flightstate_kafka._errors import translated
from flightstate_kafka.settings import KafkaSettings, TopicSettings

__all__ = ["BATCH_FRAMING_BYTES", "librdkafka_log", "provision_topics", "topic_configs"]

#: The broker checks a record *batch* against ``max.message.bytes``: a batch header (61
#: bytes) and per-record framing on top of what the producer counts (rounded up).
BATCH_FRAMING_BYTES = 1024

librdkafka_log = logging.getLogger("flightstate.kafka.librdkafka")
librdkafka_log.setLevel(logging.CRITICAL)


def topic_configs(
    topics: TopicSettings, max_record_bytes: int | None = None
) -> dict[str, dict[str, str]]:
    """Topic-level configs by logical topic (``schd``, ``msg``). *max_record_bytes*
    (``KafkaSettings.max_record_bytes``) sets ``max.message.bytes``: the broker accepts
    every record the producer sends (a compressed batch is never larger than the record
    limit plus its framing)."""
    common: dict[str, str] = {}
    if max_record_bytes is not None:
        common["max.message.bytes"] = str(max_record_bytes + BATCH_FRAMING_BYTES)
    if topics.min_insync_replicas is not None:
        common["min.insync.replicas"] = str(topics.min_insync_replicas)
    return {
        "schd": {
            **common,
            "cleanup.policy": "compact",
            "min.compaction.lag.ms": str(topics.schd_min_compaction_lag_ms),
            "delete.retention.ms": str(topics.schd_delete_retention_ms),
        },
        "msg": {
            **common,
            "cleanup.policy": "delete",
            "retention.ms": str(topics.msg_retention_ms),
        },
    }


def _reachable(admin: AdminClient, bootstrap: str, timeout: float) -> None:
    """One metadata request; TransientError naming *bootstrap* if no broker answers."""
    try:
        admin.list_topics(timeout=timeout)
    except KafkaException as exc:
        error = exc.args[0] if exc.args else exc
        detail = error.str() if isinstance(error, KafkaError) else str(error)
        raise TransientError(
            f"no Kafka broker answered at {bootstrap} within {timeout:g} s ({detail})"
        ) from exc


def provision_topics(
    settings: KafkaSettings, topics: TopicSettings | None = None, *, timeout: float = 10.0
) -> Mapping[str, str]:
    """Create the ``schd`` and ``msg`` topics if missing.

    Returns Kafka topic name → ``"created"`` or ``"exists"``; raises a core error
    (``flightstate_kafka._errors.translated``) on any other failure, and TransientError
    naming the bootstrap servers when no broker answers within *timeout* seconds.
    """
    topics = topics or TopicSettings()
    configs = topic_configs(topics, settings.max_record_bytes)
    bootstrap = settings.bootstrap_servers
    # confluent-kafka accepts a logging.Logger for "logger"; its stubs type values as scalars.
    admin = AdminClient({"bootstrap.servers": bootstrap, "logger": librdkafka_log})  # type: ignore[dict-item]
    _reachable(admin, bootstrap, timeout)
    new = [
        NewTopic(
            settings.topics[logical],
            num_partitions=topics.partitions,
            replication_factor=topics.replication_factor,
            config=configs[logical],
        )
        for logical in ("schd", "msg")
    ]
    futures = admin.create_topics(new, request_timeout=timeout)
    result: dict[str, str] = {}
    for name, future in futures.items():
        try:
            future.result(timeout)
            result[name] = "created"
        except TimeoutError as exc:  # bare, without a message: say what timed out
            raise TransientError(
                f"creating topic {name}: no answer from {bootstrap} within {timeout:g} s"
            ) from exc
        except KafkaException as exc:
            error = exc.args[0]
            if isinstance(error, KafkaError) and error.code() == KafkaError.TOPIC_ALREADY_EXISTS:
                result[name] = "exists"
                continue
            raise translated(exc, f"creating topic {name}") from exc
    return result

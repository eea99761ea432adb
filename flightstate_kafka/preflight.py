"""Deployment checks of the broker (``flightstate check``): reachable, both topics present,
``schd`` compacted, and the size limits consistent with what the producer sends.

Read-only: metadata and topic configs (``describe_configs``). A topic config the broker
does not report is taken at Kafka's default (``cleanup.policy=delete``,
``max.message.bytes=1048588``), which is what such a topic gets on a real cluster. (tansu,
the test broker, reports only the configs a topic was created with.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient
from confluent_kafka.admin._config import ConfigResource
from confluent_kafka.admin._resource import ResourceType

from flightstate_core.support.preflight import Check, failed, passed
from flightstate_kafka.settings import KafkaSettings
from flightstate_kafka.topics import BATCH_FRAMING_BYTES, librdkafka_log

__all__ = ["KAFKA_DEFAULTS", "broker_checks"]

#: Kafka's defaults for the two topic configs checked here.
KAFKA_DEFAULTS: Final = {"cleanup.policy": "delete", "max.message.bytes": "1048588"}


def broker_checks(settings: KafkaSettings, *, timeout: float = 5.0) -> list[Check]:
    """The broker's checks. An unreachable broker is one failed check."""
    bootstrap = settings.bootstrap_servers
    # confluent-kafka accepts a logging.Logger for "logger"; its stubs type values as scalars.
    admin = AdminClient({"bootstrap.servers": bootstrap, "logger": librdkafka_log})  # type: ignore[dict-item]
    try:
        present = set(admin.list_topics(timeout=timeout).topics)
    except KafkaException as exc:
        error = exc.args[0] if exc.args else exc
        detail = error.str() if isinstance(error, KafkaError) else str(error)
        found = f"{bootstrap}: no answer within {timeout:g} s ({detail})"
        fix = "check FLIGHTSTATE_KAFKA_BOOTSTRAP and the network to the brokers"
        return [failed("broker reachable", found, fix)]
    checks = [passed("broker reachable", bootstrap)]
    for logical in ("schd", "msg"):
        name = settings.topics[logical]
        if name not in present:
            checks.append(failed(f"topic {name}", "missing",
                                 "run `flightstate topics` (or create it as the deployment "
                                 "guide says)"))  # fmt: skip
            continue
        configs = _configs(admin, name, timeout)
        if configs is None:
            checks.append(failed(f"topic {name}", "its configuration could not be read",
                                 "grant DescribeConfigs on the topic to this client"))  # fmt: skip
            continue
        checks += _topic_checks(logical, name, configs, settings.max_record_bytes)
    return checks


def _configs(admin: AdminClient, topic: str, timeout: float) -> dict[str, str] | None:
    futures = admin.describe_configs([ConfigResource(ResourceType.TOPIC, topic)],
                                     request_timeout=timeout)  # fmt: skip
    try:
        (future,) = futures.values()
        entries = future.result(timeout)
    except (KafkaException, TimeoutError):
        return None
    found = {key: entry.value for key, entry in entries.items() if entry.value is not None}
    return {**KAFKA_DEFAULTS, **found}


def _topic_checks(
    logical: str, name: str, configs: Mapping[str, str], max_record_bytes: int
) -> list[Check]:
    checks = [passed(f"topic {name}", f"present ({logical})")]
    policy = configs["cleanup.policy"]
    if logical == "schd":
        label = f"topic {name} compaction"
        if "compact" in policy.split(","):
            checks.append(passed(label, f"cleanup.policy={policy}"))
        else:
            checks.append(failed(label, f"cleanup.policy={policy}",
                                 f"kafka-configs --alter --entity-type topics --entity-name {name} "
                                 "--add-config cleanup.policy=compact"))  # fmt: skip
    limit = int(configs["max.message.bytes"])
    needed = max_record_bytes + BATCH_FRAMING_BYTES
    label = f"topic {name} record size"
    found = f"max.message.bytes={limit}, the producer sends records up to {max_record_bytes}"
    if limit >= needed:
        checks.append(passed(label, found))
    else:
        fix = (f"raise the topic's max.message.bytes to {needed}, or lower "
               f"FLIGHTSTATE_KAFKA_MAX_RECORD_BYTES to {limit - BATCH_FRAMING_BYTES}")  # fmt: skip
        checks.append(failed(label, found, fix))
    return checks

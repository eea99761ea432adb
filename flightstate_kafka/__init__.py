"""flightstate_kafka: the outbox dispatcher, producer factory, topic provisioning and the
downstream consumer helper (confluent-kafka). ``flightstate_kafka.metrics`` is optional
(prometheus_client) and is not imported here."""

from flightstate_kafka.consumer import (
    DictProjection,
    Projection,
    ProjectionConsumer,
    SchdRecord,
    Seen,
    apply_record,
    decode_record,
    is_newer,
)
from flightstate_kafka.dispatcher import Dispatcher, DispatchObserver, NullObserver, record_headers
from flightstate_kafka.producer import build_producer, producer_config
from flightstate_kafka.settings import KafkaSettings, TopicSettings
from flightstate_kafka.topics import provision_topics, topic_configs

__all__ = [
    "DictProjection",
    "DispatchObserver",
    "Dispatcher",
    "KafkaSettings",
    "NullObserver",
    "Projection",
    "ProjectionConsumer",
    "SchdRecord",
    "Seen",
    "TopicSettings",
    "apply_record",
    "build_producer",
    "decode_record",
    "is_newer",
    "producer_config",
    "provision_topics",
    "record_headers",
    "topic_configs",
]

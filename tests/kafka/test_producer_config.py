"""The producer's tuning: a short linger for freshness, large batches for catch-up, and one
size setting (``max_record_bytes``) that the producer and the topics both follow."""

from __future__ import annotations

import pytest

from flightstate_core.domain.errors import ConfigError
from flightstate_kafka import KafkaSettings, TopicSettings, topic_configs
from flightstate_kafka.producer import producer_config
from flightstate_kafka.topics import BATCH_FRAMING_BYTES


def test_the_producer_lingers_one_millisecond_and_keeps_large_batches() -> None:
    conf = producer_config(KafkaSettings("127.0.0.1:1"))
    assert (conf["linger.ms"], conf["batch.num.messages"], conf["batch.size"]) == (
        "1",
        "10000",
        "1000000",
    )  # a batch is as large as the record limit allows
    slower = producer_config(KafkaSettings("127.0.0.1:1", producer_overrides={"linger.ms": "20"}))
    assert slower["linger.ms"] == "20"  # a site may trade latency for fewer requests
    big = producer_config(KafkaSettings("127.0.0.1:1", max_record_bytes=8_000_000))
    assert big["batch.size"] == "1048576"  # never above 1 MiB


def test_one_setting_sizes_the_producer_and_the_topics() -> None:
    for limit in (1_000_000, 200_000, 8_388_608):
        settings = KafkaSettings("127.0.0.1:1", max_record_bytes=limit)
        conf = producer_config(settings)
        assert conf["message.max.bytes"] == str(limit)
        assert int(conf["batch.size"]) <= limit
        configs = topic_configs(TopicSettings(), settings.max_record_bytes)
        for logical in ("schd", "msg"):  # a batch of one record at the limit fits the topic
            assert configs[logical]["max.message.bytes"] == str(limit + BATCH_FRAMING_BYTES)
    assert "max.message.bytes" not in topic_configs(TopicSettings())["schd"]


def test_the_size_properties_cannot_be_overridden_apart() -> None:
    for key in ("message.max.bytes", "batch.size"):
        with pytest.raises(ConfigError, match="max_record_bytes"):
            producer_config(KafkaSettings("127.0.0.1:1", producer_overrides={key: "5000"}))
    for bad in (100, 2047, 1_000_000_001):
        with pytest.raises(ConfigError, match="max_record_bytes"):
            KafkaSettings("127.0.0.1:1", max_record_bytes=bad)


def test_the_producer_compresses() -> None:
    conf = producer_config(KafkaSettings("127.0.0.1:1"))
    assert conf["compression.type"] == "zstd"  # benchmarks/bench_compression.py

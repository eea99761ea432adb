"""The producer's tuning: a short linger for freshness, large batches for catch-up."""

from __future__ import annotations

from flightstate_kafka import KafkaSettings
from flightstate_kafka.producer import producer_config


def test_the_producer_lingers_one_millisecond_and_keeps_large_batches() -> None:
    conf = producer_config(KafkaSettings("127.0.0.1:1"))
    assert (conf["linger.ms"], conf["batch.num.messages"], conf["batch.size"]) == (
        "1", "10000", "1048576")
    slower = producer_config(KafkaSettings("127.0.0.1:1", producer_overrides={"linger.ms": "20"}))
    assert slower["linger.ms"] == "20"  # a site may trade latency for fewer requests

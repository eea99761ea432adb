"""The broker's deployment checks on tansu: provisioned topics pass; a missing topic, a
``schd`` without compaction and a topic limit below the producer's records each fail with
their fix; an unreachable broker is one line."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

from flightstate_core.support.preflight import Check, all_passed
from flightstate_kafka import KafkaSettings
from flightstate_kafka.preflight import broker_checks
from flightstate_kafka.topics import provision_topics
from tests.fixtures.util import unique_name

pytestmark = pytest.mark.kafka


def _settings(bootstrap: str, **kw: object) -> KafkaSettings:
    topics = {"schd": unique_name("pf_schd"), "msg": unique_name("pf_msg")}
    return KafkaSettings(bootstrap, topics=topics, **kw)  # type: ignore[arg-type]


def _create(bootstrap: str, name: str, config: dict[str, str] | None = None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(name, 1, 1, config=config or {})]).values():
        future.result(10)


def _failed(checks: list[Check]) -> dict[str, Check]:
    return {check.name: check for check in checks if not check.ok}


def test_provisioned_topics_pass_every_check(kafka_bootstrap: str) -> None:
    settings = _settings(kafka_bootstrap)
    provision_topics(settings)
    checks = broker_checks(settings)
    assert all_passed(checks), [c.line() for c in checks]
    schd, msg = settings.topics["schd"], settings.topics["msg"]
    assert [c.name for c in checks] == [
        "broker reachable", f"topic {schd}", f"topic {schd} compaction",
        f"topic {schd} record size", f"topic {msg}", f"topic {msg} record size",
    ]  # fmt: skip


def test_missing_topics_are_named(kafka_bootstrap: str) -> None:
    settings = _settings(kafka_bootstrap)
    failed = _failed(broker_checks(settings))
    assert set(failed) == {f"topic {settings.topics['schd']}", f"topic {settings.topics['msg']}"}
    assert all("flightstate topics" in check.fix for check in failed.values())


def test_schd_without_compaction_fails_with_the_command_to_fix_it(kafka_bootstrap: str) -> None:
    settings = _settings(kafka_bootstrap)
    schd = settings.topics["schd"]
    _create(kafka_bootstrap, schd)  # the broker's default policy: delete
    _create(kafka_bootstrap, settings.topics["msg"])
    failed = _failed(broker_checks(settings))
    assert list(failed) == [f"topic {schd} compaction"]
    assert failed[f"topic {schd} compaction"].found == "cleanup.policy=delete"
    assert "cleanup.policy=compact" in failed[f"topic {schd} compaction"].fix


def test_a_topic_limit_below_the_producers_records_fails(kafka_bootstrap: str) -> None:
    settings = _settings(kafka_bootstrap, max_record_bytes=200_000)
    msg = settings.topics["msg"]
    _create(kafka_bootstrap, settings.topics["schd"],
            {"cleanup.policy": "compact", "max.message.bytes": "300000"})  # fmt: skip
    _create(kafka_bootstrap, msg, {"max.message.bytes": "100000"})
    failed = _failed(broker_checks(settings))
    assert list(failed) == [f"topic {msg} record size"]
    check = failed[f"topic {msg} record size"]
    assert check.found == "max.message.bytes=100000, the producer sends records up to 200000"
    assert "FLIGHTSTATE_KAFKA_MAX_RECORD_BYTES" in check.fix


def test_an_unreachable_broker_is_one_failed_check() -> None:
    checks = broker_checks(_settings("127.0.0.1:1"), timeout=1.0)
    assert len(checks) == 1
    assert not checks[0].ok
    assert checks[0].line().startswith("\u2718 broker reachable: 127.0.0.1:1: no answer within 1 s")

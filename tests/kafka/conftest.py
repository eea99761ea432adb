"""Fixtures of the Kafka tests: an outbox database, unique topics, settings."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from flightstate_kafka import KafkaSettings, TopicSettings, provision_topics
from flightstate_pg.outbox import PgOutbox
from tests.fixtures.util import unique_name
from tests.kafka._outbox_db import create_outbox_schema


@pytest.fixture
def outbox_dsn(pg_db: str) -> str:
    """A fresh database with MSG_EVENT (the PG migrations)."""
    create_outbox_schema(pg_db)
    return pg_db


@pytest.fixture
def outbox(outbox_dsn: str) -> Iterator[PgOutbox]:
    """A ``PgOutbox`` on the fresh database."""
    box = PgOutbox(outbox_dsn)
    yield box
    box.close()


def make_settings(bootstrap: str, **kw: object) -> KafkaSettings:
    """Settings with unique topic names, provisioned on *bootstrap* (3 partitions)."""
    settings = KafkaSettings(
        bootstrap, topics={"schd": unique_name("schd"), "msg": unique_name("msg")}, **kw
    )  # type: ignore[arg-type]
    provision_topics(settings, TopicSettings(partitions=3))
    return settings


@pytest.fixture
def settings(kafka_bootstrap: str) -> KafkaSettings:
    """Settings on the shared broker with freshly provisioned topics."""
    return make_settings(kafka_bootstrap, delivery_timeout_s=10.0)


@pytest.fixture
def make_dispatcher(outbox: PgOutbox, settings: KafkaSettings) -> Iterator[object]:
    """``make(**kw)`` builds a Dispatcher on the test outbox and settings; closed after."""
    from flightstate_kafka import Dispatcher  # noqa: PLC0415

    made: list[Dispatcher] = []

    def make(**kw: object) -> Dispatcher:
        dispatcher = Dispatcher(outbox, settings, **kw)  # type: ignore[arg-type]
        made.append(dispatcher)
        return dispatcher

    yield make
    for dispatcher in made:
        dispatcher.close()

"""Topic provisioning on tansu, and outbox housekeeping at a million rows."""

from __future__ import annotations

from datetime import datetime, timedelta

import psycopg
import pytest
from confluent_kafka.admin import AdminClient, ConfigResource

from flightstate_kafka import Dispatcher, KafkaSettings, TopicSettings, provision_topics
from flightstate_pg.outbox import PgOutbox
from tests.fixtures.util import unique_name


@pytest.mark.kafka
def test_provision_topics_is_idempotent_and_sets_configs(kafka_bootstrap: str) -> None:
    settings = KafkaSettings(kafka_bootstrap,
                             topics={"schd": unique_name("schd"), "msg": unique_name("msg")})
    topics = TopicSettings(partitions=4, schd_min_compaction_lag_ms=1000,
                           schd_delete_retention_ms=2000, msg_retention_ms=3000)
    first = provision_topics(settings, topics)
    assert set(first.values()) == {"created"}
    assert set(provision_topics(settings, topics).values()) == {"exists"}
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    metadata = admin.list_topics(timeout=10)
    assert len(metadata.topics[settings.topics["schd"]].partitions) == 4
    resource = ConfigResource("topic", settings.topics["schd"])
    configs = {k: v.value for k, v in admin.describe_configs([resource])[resource]
               .result(10).items()}
    # tansu stores and reports the configs (it does not compact, though).
    assert configs["cleanup.policy"] == "compact"
    assert configs["min.compaction.lag.ms"] == "1000"
    assert configs["delete.retention.ms"] == "2000"


_FILL = """
INSERT INTO msg_event (topic, event_key, payload, flid, state_version, kind, message_id,
                       created_at, dispatched_at)
SELECT 'schd', 'F' || (g %% 5000), '{"flid":"F' || (g %% 5000) || '","stateVersion":' || g || '}',
       'F' || (g %% 5000), g, 'SNAPSHOT', g, %(old)s,
       CASE WHEN g %% 2 = 0 THEN %(old)s WHEN g %% 10 = 1 THEN %(recent)s END
FROM generate_series(1, %(n)s) AS g
"""


class CountingOutbox(PgOutbox):
    """The real PG outbox, remembering how many rows each purge call deleted."""

    def __init__(self, dsn: str) -> None:
        super().__init__(dsn)
        self.purged: list[int] = []

    def purge_dispatched(self, older_than: datetime, limit: int) -> int:
        deleted = super().purge_dispatched(older_than, limit)
        self.purged.append(deleted)
        return deleted


@pytest.mark.pg
@pytest.mark.slow
def test_purge_a_million_events_in_bounded_batches(outbox_dsn: str) -> None:
    now = datetime.now().astimezone()
    with psycopg.connect(outbox_dsn, autocommit=True) as conn:
        conn.execute(_FILL, {"n": 1_000_000, "old": now - timedelta(days=2), "recent": now})
        conn.execute("ANALYZE msg_event")
    outbox = CountingOutbox(outbox_dsn)
    try:
        assert outbox.backlog().count == 400_000
        dispatcher = Dispatcher(outbox, KafkaSettings("127.0.0.1:1"))  # never connects
        assert dispatcher.purge(timedelta(days=1), batch=100_000) == 500_000
        assert max(outbox.purged) <= 100_000
        assert len(outbox.purged) == 6  # five full batches, then a short one ends the loop
        assert outbox.backlog().count == 400_000
    finally:
        outbox.close()
    with psycopg.connect(outbox_dsn) as conn:
        counts = conn.execute(
            "SELECT count(*) FILTER (WHERE dispatched_at IS NULL),"
            " count(*) FILTER (WHERE dispatched_at IS NOT NULL), count(*) FROM msg_event"
        ).fetchone()
        odd_even = conn.execute(
            "SELECT count(*) FROM msg_event WHERE state_version % 2 = 0").fetchone()
    assert counts == (400_000, 100_000, 500_000)
    assert odd_even == (0,)

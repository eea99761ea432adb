"""Topic provisioning on tansu, and outbox housekeeping at a million rows."""

from __future__ import annotations

from datetime import datetime, timedelta

import psycopg
import pytest
from confluent_kafka.admin import AdminClient, ConfigResource

from flightstate_kafka import Dispatcher, KafkaSettings, TopicSettings, provision_topics
from flightstate_pg.outbox import PgOutbox
from tests.fixtures.util import unique_name
from tests.kafka._outbox_db import set_watermark


@pytest.mark.kafka
def test_provision_topics_is_idempotent_and_sets_configs(kafka_bootstrap: str) -> None:
    settings = KafkaSettings(
        kafka_bootstrap,
        max_record_bytes=2_000_000,
        topics={"schd": unique_name("schd"), "msg": unique_name("msg")},
    )
    topics = TopicSettings(
        partitions=4,
        schd_min_compaction_lag_ms=1000,
        schd_delete_retention_ms=2000,
        msg_retention_ms=3000,
    )
    first = provision_topics(settings, topics)
    assert set(first.values()) == {"created"}
    assert set(provision_topics(settings, topics).values()) == {"exists"}
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    metadata = admin.list_topics(timeout=10)
    assert len(metadata.topics[settings.topics["schd"]].partitions) == 4
    resource = ConfigResource("topic", settings.topics["schd"])
    configs = {
        k: v.value for k, v in admin.describe_configs([resource])[resource].result(10).items()
    }
    # tansu stores and reports the configs (it does not compact, though).
    assert configs["cleanup.policy"] == "compact"
    assert configs["min.compaction.lag.ms"] == "1000"
    assert configs["delete.retention.ms"] == "2000"
    assert configs["max.message.bytes"] == "2001024"  # the record limit + batch framing


_FILL = """
INSERT INTO msg_event (topic, event_key, payload, flid, state_version, kind, message_id,
                       created_at)
SELECT 'schd', 'F' || (g %% 5000), '{"flid":"F' || (g %% 5000) || '","stateVersion":' || g || '}',
       'F' || (g %% 5000), g, 'SNAPSHOT', g,
       CASE WHEN g <= %(old_upto)s THEN %(old)s ELSE %(recent)s END
FROM generate_series(1, %(n)s) AS g ORDER BY g
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
    """Only rows at or below the watermark AND older than the horizon go; the old rows
    above the watermark (not delivered yet) and the recent ones stay."""
    now = datetime.now().astimezone()
    with psycopg.connect(outbox_dsn, autocommit=True) as conn:
        conn.execute(
            _FILL,
            {"n": 1_000_000, "old_upto": 700_000, "old": now - timedelta(days=2), "recent": now},
        )
        conn.execute("ANALYZE msg_event")
    set_watermark(outbox_dsn, 500_000)
    outbox = CountingOutbox(outbox_dsn)
    try:
        assert outbox.backlog().count == 500_000
        dispatcher = Dispatcher(outbox, KafkaSettings("127.0.0.1:1"))  # never connects
        assert dispatcher.purge(timedelta(days=1), batch=100_000) == 500_000
        assert max(outbox.purged) <= 100_000
        assert outbox.purged == [100_000] * 5 + [0]  # an empty batch ends the loop
        backlog = outbox.backlog()
        assert backlog.count == 500_000
        assert backlog.watermark == 500_000
        dispatcher.close()
    finally:
        outbox.close()
    with psycopg.connect(outbox_dsn) as conn:
        left = conn.execute(
            "SELECT count(*), min(event_id), max(event_id),"
            " count(*) FILTER (WHERE created_at < now() - interval '1 day') FROM msg_event"
        ).fetchone()
        ids_match = conn.execute(
            "SELECT count(*) FROM msg_event WHERE event_id <> state_version"
        ).fetchone()
    assert left == (500_000, 500_001, 1_000_000, 200_000)
    assert ids_match == (0,)  # the identity followed the series: ids are what we think

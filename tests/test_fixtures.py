"""Each service fixture proven with one real round trip; plus the helpers they rely on."""

from __future__ import annotations

from collections.abc import Callable

import psycopg
import pymysql
import pytest
from confluent_kafka import Producer

from flightstate_mysql.dsn import parse_mysql_dsn
from tests.fixtures.corpus import CORPUS_DIR, read_index
from tests.fixtures.kafka import TansuBroker, read_topic
from tests.fixtures.services import REQUIRE_SERVICES_ENV, require_service

CHINESE = "浦东国际机场 航班延误 𠮷"  # the last character is 4 bytes in UTF-8


# --------------------------------------------------------------------------- PostgreSQL


@pytest.mark.pg
def test_pg_dsn_round_trip(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn) as conn:
        conn.execute("CREATE TABLE fixture_probe (id int PRIMARY KEY, note text NOT NULL)")
        conn.execute("INSERT INTO fixture_probe VALUES (1, %s)", (CHINESE,))
        row = conn.execute("SELECT note, current_database() FROM fixture_probe").fetchone()
        conn.execute("DROP TABLE fixture_probe")
    assert row is not None
    assert row[0] == CHINESE
    assert row[1].startswith("fs_test_")


@pytest.mark.pg
def test_pg_db_is_a_new_empty_database(pg_db: str, pg_dsn: str) -> None:
    with psycopg.connect(pg_db) as conn:
        name = conn.execute("SELECT current_database()").fetchone()
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone()
    assert name is not None
    assert name[0].startswith("fs_test_")
    assert name[0] not in pg_dsn
    assert tables == (0,)


@pytest.mark.pg
def test_embedded_pg_dsn_answers(embedded_pg_dsn: str) -> None:
    with psycopg.connect(embedded_pg_dsn) as conn:
        row = conn.execute("SELECT version(), current_database()").fetchone()
    assert row is not None
    assert row[0].startswith("PostgreSQL")
    assert row[1].startswith("fs_test_")


# --------------------------------------------------------------------------- MariaDB


@pytest.mark.mysql
def test_mysql_dsn_round_trip_utf8mb4(mysql_dsn: str) -> None:
    with pymysql.connect(**parse_mysql_dsn(mysql_dsn)) as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE fixture_probe (id INT PRIMARY KEY, note VARCHAR(64) NOT NULL)")
        cur.execute("INSERT INTO fixture_probe VALUES (1, %s)", (CHINESE,))
        conn.commit()
        cur.execute("SELECT note, DATABASE() FROM fixture_probe")
        row = cur.fetchone()
        cur.execute("DROP TABLE fixture_probe")
    assert row is not None
    assert row[0] == CHINESE
    assert row[1].startswith("fs_test_")


def test_parse_mysql_dsn() -> None:
    assert parse_mysql_dsn("mysql://root@127.0.0.1:3306/") == {
        "host": "127.0.0.1",
        "port": 3306,
        "user": "root",
        "charset": "utf8mb4",
    }
    assert parse_mysql_dsn("mariadb://u%40x:p%2Fw@db/flights?connect_timeout=5") == {
        "host": "db",
        "port": 3306,
        "user": "u@x",
        "password": "p/w",
        "database": "flights",
        "charset": "utf8mb4",
        "connect_timeout": 5,
    }
    with pytest.raises(ValueError, match="scheme"):
        parse_mysql_dsn("postgresql://x/y")
    with pytest.raises(ValueError, match="option"):
        parse_mysql_dsn("mysql://x/y?sslmode=on")


# --------------------------------------------------------------------------- Kafka


def _produce_one(bootstrap: str, topic: str, value: bytes) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    producer.produce(topic, key=b"k", value=value)
    assert producer.flush(30) == 0


@pytest.mark.kafka
def test_kafka_round_trip(kafka_bootstrap: str, kafka_topic_factory: Callable[..., str]) -> None:
    topic = kafka_topic_factory("probe")
    _produce_one(kafka_bootstrap, topic, CHINESE.encode())
    records = read_topic(kafka_bootstrap, topic, expected=1)
    assert [(r.key(), r.value()) for r in records] == [(b"k", CHINESE.encode())]


@pytest.mark.kafka
def test_tansu_broker_restart_keeps_port(tansu_broker: TansuBroker) -> None:
    bootstrap = tansu_broker.bootstrap
    tansu_broker.restart()
    assert tansu_broker.running
    assert tansu_broker.bootstrap == bootstrap
    topic = tansu_broker.create_topic("after_restart")
    _produce_one(bootstrap, topic, b"again")
    assert [r.value() for r in read_topic(bootstrap, topic, expected=1)] == [b"again"]


# --------------------------------------------------------------------------- Oracle, policy


@pytest.mark.oracle
def test_oracle_dsn_is_given(oracle_dsn: str) -> None:
    assert oracle_dsn


def test_require_service_skips_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REQUIRE_SERVICES_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match="no db"):
        require_service("no db")


def test_require_service_fails_when_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REQUIRE_SERVICES_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match="no db"):
        require_service("no db")


# --------------------------------------------------------------------------- corpus


def test_corpus_index_lists_existing_files() -> None:
    rows = read_index()
    assert len(rows) == 172
    missing = [row["file"] for row in rows if not (CORPUS_DIR / row["file"]).is_file()]
    assert missing == []

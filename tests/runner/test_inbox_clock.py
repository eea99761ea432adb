"""Head age and pump lag on one clock (docs/design.md, "Operator view"): DATE_RECEIVED is
stamped by the inbox server's own clock, in the server's zone, which need not be the
airport's. With an Asia/Shanghai airport and a UTC (or UTC-5) inbox server, the head age,
the pump's lag and a row's ``received_at`` are seconds, not the 8 (13) hours they were
when DATE_RECEIVED was taken as airport-local time.

The shared servers are not reconfigured: every session of the "server" (the AODB writer
stamping DATE_RECEIVED, the pump's reads, the probes) is given the server's zone through
its DSN (MariaDB ``init_command=SET time_zone``, PostgreSQL ``options=-c TimeZone``), so all
of them see one server clock in that zone, exactly as on a server configured so.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote
from zoneinfo import ZoneInfo

import psycopg
import pymysql
import pytest
from psycopg import sql

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.errors import ConfigError
from flightstate_core.engine.operations import received_instant
from flightstate_core.memory import MemoryStore
from flightstate_core.pump import Backoff, Pump, PumpSettings, ServiceProcessor
from flightstate_mysql import MySqlInbox, create_cminmsgs, insert_messages, parse_mysql_dsn
from flightstate_pg.inbox import PgInbox, create_inbox_table
from flightstate_pg.queries import PgQueries
from flightstate_runner import probes
from flightstate_runner.config import RunnerConfig, load_config
from flightstate_testing.seeded import build_flop
from tests.fixtures.util import unique_name

AIRPORT = "Asia/Shanghai"
#: Far below the 8 hours the old reading was off by, far above a loaded machine's delays.
SECONDS = 120.0
#: (MariaDB time_zone, PostgreSQL TimeZone) of the modelled inbox server.
SERVER_ZONES = [("+00:00", "UTC"), ("-05:00", "America/Bogota")]


def _with_query(dsn: str, option: str) -> str:
    return f"{dsn}{'&' if '?' in dsn else '?'}{option}"


def _mysql_server(dsn: str, zone: str) -> str:
    """*dsn* whose every session runs in *zone*: a server configured with that zone."""
    return _with_query(dsn, "init_command=" + quote(f"SET time_zone = '{zone}'", safe=""))


def _pg_server(dsn: str, zone: str) -> str:
    return _with_query(dsn, "options=" + quote(f"-c TimeZone={zone}", safe=""))


def _lag(config: RunnerConfig, store_dsn: str) -> probes.InboxLag:
    """``probes.inbox_lag`` from the cursor 0, on queries of the store at *store_dsn*."""
    queries = PgQueries(store_dsn, config.core())
    try:
        return probes.inbox_lag(config, queries, 0)
    finally:
        queries.close()


def _flops(count: int) -> list[str]:
    return [build_flop("ESTT", n, flid=str(200_000 + n)).decode() for n in range(count)]


def _aodb_mysql(conn: pymysql.connections.Connection[Any], table: str, count: int) -> None:
    """The AODB's write: DATE_RECEIVED is the server's NOW() (its clock, its zone)."""
    with conn.cursor() as cur:
        for raw in _flops(count):
            cur.execute(f"INSERT INTO `{table}` (CMINMSGS_CLOB_MSG, CMINMSGS_DATE_RECEIVED,"
                        " CMINMSGS_STATUS) VALUES (%s, NOW(), 'VALID')", (raw,))  # fmt: skip


def _aodb_pg(conn: psycopg.Connection[Any], table: str, count: int) -> None:
    for raw in _flops(count):
        conn.execute(sql.SQL("INSERT INTO {} (CMINMSGS_CLOB_MSG, CMINMSGS_DATE_RECEIVED,"
                             " CMINMSGS_STATUS) VALUES (%s, localtimestamp(0), 'VALID')")
                     .format(sql.Identifier(table.lower())), (raw,))  # fmt: skip


@pytest.fixture
def table() -> str:
    return unique_name("cmin")


@pytest.fixture(params=SERVER_ZONES, ids=lambda zones: f"server{zones[0]}")
def mysql_server(request: pytest.FixtureRequest, mysql_dsn: str, table: str) -> str:
    """A MariaDB inbox table on a server in the parameter's zone, 3 rows stamped by it."""
    dsn = _mysql_server(mysql_dsn, request.param[0])
    conn = pymysql.connect(autocommit=True, **parse_mysql_dsn(dsn))
    try:
        create_cminmsgs(conn, table)
        _aodb_mysql(conn, table, 3)
        with conn.cursor() as cur:
            cur.execute("SELECT TIMESTAMPDIFF(HOUR, UTC_TIMESTAMP(), NOW())")
            offset: Any = cur.fetchone()
        assert abs(int(offset[0])) in (0, 5)  # the session really runs in that zone
    finally:
        conn.close()
    return dsn


@pytest.mark.mysql
def test_rows_read_from_a_server_off_the_airport_zone_are_seconds_old(
    mysql_server: str, table: str
) -> None:
    inbox = MySqlInbox(mysql_server, table=table, local_tz=AIRPORT)
    try:
        rows = inbox.read_after(0, 10)
    finally:
        inbox.close()
    assert len(rows) == 3
    for row in rows:
        assert row.received_at is not None
        assert abs((datetime.now(UTC) - row.received_at).total_seconds()) < SECONDS


@pytest.mark.mysql
def test_the_pump_lag_is_seconds_with_a_server_off_the_airport_zone(
    mysql_server: str, table: str
) -> None:
    store = MemoryStore()
    inbox = MySqlInbox(mysql_server, table=table, local_tz=AIRPORT)
    pump = Pump(
        processor=ServiceProcessor(store, CoreConfig(airport_tz=AIRPORT)), inbox=inbox,
        lease=store, backfills=store, read_cursor=store.inbox_cursor,
        settings=PumpSettings(holder="clock", stop_when_idle=True, idle_poll=0.01,
                              retry=Backoff(0.01, 0.1)),
    )  # fmt: skip
    try:
        stats = pump.run()
    finally:
        inbox.close()
    assert stats.processed == 3
    assert stats.lag_seconds is not None
    assert stats.lag_seconds < SECONDS


@pytest.mark.mysql
@pytest.mark.pg
def test_the_head_age_is_measured_by_the_mysql_server(
    mysql_server: str, table: str, pg_db: str
) -> None:
    config = RunnerConfig(pg_dsn=pg_db, mysql_dsn=mysql_server, inbox_table=table,
                          airport_tz=AIRPORT)  # fmt: skip
    lag = _lag(config, pg_db)
    assert lag.lag == 3
    assert lag.head_age_s is not None
    assert lag.head_age_s < SECONDS


@pytest.mark.pg
@pytest.mark.parametrize("zone", [pg for _, pg in SERVER_ZONES])
def test_the_pg_table_inbox_reads_and_measures_on_its_server_clock(
    pg_db: str, table: str, zone: str
) -> None:
    dsn = _pg_server(pg_db, zone)
    with psycopg.connect(dsn) as conn:
        create_inbox_table(conn, table)
        _aodb_pg(conn, table, 2)
    inbox = PgInbox(dsn, table=table, local_tz=AIRPORT)
    try:
        rows = inbox.read_after(0, 10)
    finally:
        inbox.close()
    assert len(rows) == 2
    for row in rows:
        assert row.received_at is not None
        assert abs((datetime.now(UTC) - row.received_at).total_seconds()) < SECONDS
    config = RunnerConfig(pg_dsn=dsn, inbox="store", inbox_table=table, airport_tz=AIRPORT)
    lag = _lag(config, dsn)
    assert lag.head_age_s is not None
    assert lag.head_age_s < SECONDS


@pytest.mark.mysql
@pytest.mark.pg
def test_a_configured_inbox_zone_is_trusted_for_wall_clock_stamps(
    mysql_dsn: str, table: str, pg_db: str
) -> None:
    """An AODB that stamps its own airport-local wall clock on a UTC server: with
    FLIGHTSTATE_INBOX_TZ naming that zone the age is seconds again."""
    dsn = _mysql_server(mysql_dsn, "+00:00")
    conn = pymysql.connect(autocommit=True, **parse_mysql_dsn(dsn))
    try:
        create_cminmsgs(conn, table)
        insert_messages(conn, _flops(2), table=table, local_tz=AIRPORT)  # wall time there
    finally:
        conn.close()
    config = RunnerConfig(pg_dsn=pg_db, mysql_dsn=dsn, inbox_table=table, airport_tz=AIRPORT,
                          inbox_tz=AIRPORT)  # fmt: skip
    lag = _lag(config, pg_db)
    assert lag.head_age_s is not None
    assert lag.head_age_s < SECONDS
    inbox = MySqlInbox(dsn, table=table, local_tz=AIRPORT, received_tz=AIRPORT)
    try:
        rows = inbox.read_after(0, 10)
    finally:
        inbox.close()
    assert all(abs((datetime.now(UTC) - r.received_at).total_seconds()) < SECONDS
               for r in rows if r.received_at is not None)  # fmt: skip
    assert all(r.received_at is not None for r in rows)


def test_received_instant_uses_the_server_clock_or_the_configured_zone() -> None:
    read_at = datetime(2026, 12, 4, 12, 0, 0, tzinfo=UTC)
    stamped = datetime(2026, 12, 4, 11, 59, 55)  # a UTC server's wall clock
    server_now = datetime(2026, 12, 4, 12, 0, 0, 250_000)
    assert received_instant(stamped, None, server_now, read_at) == read_at - timedelta(
        seconds=5, microseconds=250_000
    )
    zone = ZoneInfo(AIRPORT)
    assert received_instant(stamped, zone, server_now, read_at) == stamped.replace(tzinfo=zone)
    aware = datetime(2026, 12, 4, 3, 0, tzinfo=UTC)
    assert received_instant(aware, None, server_now, read_at) is aware
    assert received_instant(None, None, server_now, read_at) is None
    assert received_instant(stamped, None, None, read_at) is None


def test_the_inbox_zone_setting_is_a_known_zone_or_empty() -> None:
    assert load_config(None, {}).inbox_tz == ""  # the server's own clock
    assert load_config(None, {"FLIGHTSTATE_INBOX_TZ": "UTC"}).inbox_tz == "UTC"
    with pytest.raises(ConfigError, match=r"^inbox_tz: unknown time zone"):
        load_config(None, {"FLIGHTSTATE_INBOX_TZ": "Mars/Olympus"})

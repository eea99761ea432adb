"""Housekeeping inside `run`: cleanup on a schedule, request resend then failure,
outbox purge, with metrics; only while leading, fenced by the pump's epoch. Real PG and
MariaDB."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import timedelta

import pymysql
import pytest

import flightstate_pg
from flightstate_core.ports import RequestStatus
from flightstate_core.pump import PumpStats
from flightstate_mysql import create_coutmsgs, parse_mysql_dsn
from flightstate_mysql.outbound import MySqlOutbound
from flightstate_pg import PgStore
from flightstate_pg.lease import PgLeaderLease
from flightstate_pg.outbox import PgOutbox
from flightstate_pg.queries import PgQueries
from flightstate_pg.requests import request_schedule, request_status
from flightstate_runner.config import RunnerConfig
from flightstate_runner.housekeeping import Housekeeping
from flightstate_runner.metrics import RunnerMetrics
from flightstate_testing.models import as_text, fltr, schedule
from tests.fixtures.util import unique_name
from tests.lifecycle.helpers import CONFIG, NOW, SENT, apply, rows

pytestmark = [pytest.mark.pg, pytest.mark.mysql]

OLD = NOW - timedelta(days=9)

#: A DNLD package creating flight A1 with a scheduled and an actual time.
_A1_PACKAGE = as_text(
    schedule(
        "DNLD", fltr("A1", SODT="20NOV260535", ACTT="20NOV260540"),
        seqn="1", recs="count", dttm=SENT,
    )
)  # fmt: skip


@pytest.fixture
def aodb_dsn(mysql_dsn: str) -> Iterator[str]:
    """A MariaDB database of its own holding the real-named ``coutmsgs``."""
    name = unique_name("fs_hk")
    kwargs = parse_mysql_dsn(mysql_dsn)
    kwargs.pop("database", None)
    with pymysql.connect(**kwargs) as conn, conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
    dsn = mysql_dsn.rsplit("/", 1)[0] + f"/{name}"
    with pymysql.connect(**parse_mysql_dsn(dsn)) as conn:
        create_coutmsgs(conn)
    yield dsn
    with pymysql.connect(**kwargs) as conn, conn.cursor() as cur:
        cur.execute(f"DROP DATABASE `{name}`")


def _housekeeping(pg_db: str, aodb_dsn: str, stats: PumpStats | None, **settings: object):
    config = RunnerConfig(pg_dsn=pg_db, mysql_dsn=aodb_dsn, **settings)  # type: ignore[arg-type]
    store = PgStore(pg_db, config.core(), state_cache_size=0)
    metrics = RunnerMetrics()
    queries = PgQueries(pg_db, config.core())
    keeper = Housekeeping(config, queries, lambda: PgOutbox(pg_db), metrics=metrics,
                          leading=lambda: stats,
                          log=logging.getLogger("test"),
                          wake=lambda: WAKES.append("dispatcher"))  # fmt: skip
    WAKES.clear()
    return keeper, store, metrics


WAKES: list[str] = []  # one entry per wake-up by the keeper `_housekeeping` made last


def _value(metrics: RunnerMetrics, name: str, **labels: str) -> float:
    found = metrics.registry.get_sample_value(name, labels or None)
    return 0.0 if found is None else found


def test_cleanup_requests_and_purge_run_while_leading(pg_db: str, aodb_dsn: str) -> None:
    flightstate_pg.migrate(pg_db)
    epoch = PgLeaderLease(pg_db).try_acquire("pump-1", 60)
    assert epoch is not None
    seed = PgStore(pg_db, CONFIG)
    apply(
        seed,
        1,
        as_text(
            schedule(
                "DNLD",
                fltr("A1", SODT="20NOV260535", ACTT="20NOV260540"),
                seqn="1",
                recs="count",
                dttm=SENT,
            )
        ),
        now=OLD,
    )
    outbound = MySqlOutbound(aodb_dsn)
    request_id = request_schedule(seed, outbound, NOW, NOW + timedelta(days=1), now=OLD,
                                  config=CONFIG)  # fmt: skip
    outbound.close()
    seed.close()

    keeper, store, metrics = _housekeeping(
        pg_db, aodb_dsn, PumpStats(epoch=epoch, is_leader=True),
        request_timeout=60, request_max_attempts=2, outbox_retention_hours=0,
    )  # fmt: skip
    keeper.tick(NOW)

    assert store.get_flights(["A1"]) == {}  # archived and removed
    assert _value(metrics, "flightstate_cleanup_removed_total") == 1
    assert _value(metrics, "flightstate_cleanup_tombstones_total") == 1
    assert WAKES == ["dispatcher"]  # the tombstone goes out now, not at the dispatcher's next poll
    report = request_status(store)
    (request,) = [r for r in report.requests if r.request_id == request_id]
    assert request.attempts == 2  # sent again with a new SEQN
    with pymysql.connect(**parse_mysql_dsn(aodb_dsn)) as conn, conn.cursor() as cur:
        cur.execute("SELECT count(*) FROM coutmsgs WHERE ROUTINGID = 'VIEWRQFD'")
        assert cur.fetchone()[0] == 2
    assert _value(metrics, "flightstate_schedule_requests", status="OPEN") == 1
    # the events written so far are not delivered (no broker): nothing may be purged
    assert _value(metrics, "flightstate_outbox_purged_total") == 0
    assert rows(pg_db, "SELECT count(*) FROM MSG_EVENT")[0][0] > 0

    # the next request tick, after another timeout: the limit is reached, the request fails
    keeper._due.clear()
    keeper.tick(NOW + timedelta(minutes=5))
    (request,) = [r for r in request_status(store).requests if r.request_id == request_id]
    assert request.status is RequestStatus.FAILED
    assert _value(metrics, "flightstate_schedule_requests", status="FAILED") == 1
    store.close()


def test_nothing_runs_while_standing_by(pg_db: str, aodb_dsn: str) -> None:
    flightstate_pg.migrate(pg_db)
    seed = PgStore(pg_db, CONFIG)
    apply(
        seed,
        1,
        as_text(
            schedule(
                "DNLD",
                fltr("A1", SODT="20NOV260535", ACTT="20NOV260540"),
                seqn="1",
                recs="count",
                dttm=SENT,
            )
        ),
        now=OLD,
    )
    seed.close()
    keeper, store, metrics = _housekeeping(pg_db, aodb_dsn, None)
    keeper.tick(NOW)
    assert list(store.get_flights(["A1"])) == ["A1"]
    assert _value(metrics, "flightstate_cleanup_removed_total") == 0
    assert WAKES == []
    store.close()


def test_a_stale_epoch_cleans_nothing(pg_db: str, aodb_dsn: str) -> None:
    flightstate_pg.migrate(pg_db)
    lease = PgLeaderLease(pg_db)
    old_epoch = lease.try_acquire("pump-1", 60)
    lease.release("pump-1")
    assert lease.try_acquire("pump-2", 60) != old_epoch  # another pump leads now
    seed = PgStore(pg_db, CONFIG)
    apply(
        seed,
        1,
        as_text(
            schedule(
                "DNLD",
                fltr("A1", SODT="20NOV260535", ACTT="20NOV260540"),
                seqn="1",
                recs="count",
                dttm=SENT,
            )
        ),
        now=OLD,
    )
    seed.close()
    keeper, store, metrics = _housekeeping(
        pg_db, aodb_dsn, PumpStats(epoch=old_epoch, is_leader=True)
    )
    keeper.tick(NOW)
    assert list(store.get_flights(["A1"])) == ["A1"]  # fenced: nothing removed
    assert _value(metrics, "flightstate_housekeeping_failures_total", task="cleanup") == 1
    store.close()

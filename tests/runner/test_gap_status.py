"""Gaps in the inbox ids (docs/design.md, "Gaps in the inbox ids") as a new user meets them:
two AODB writers on real MariaDB, the runner as subprocesses. Writer 1 holds row N open,
writer 2 commits N+1; `run --until-idle` goes past N after the (short) grace and `status`
shows the open gap; writer 1 commits; the next `run --until-idle` applies N late and
backfills it, and `status --json` counts it."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest

import flightstate_pg
from flightstate_core.domain.errors import ConfigError
from flightstate_core.domain.records import GapRange, InboxRow
from flightstate_core.engine.processor import ServiceProcessor
from flightstate_runner.config import load_config
from flightstate_runner.loop import Runner
from flightstate_runner.metrics import RunnerMetrics
from flightstate_runner.observe import ObservedProcessor
from flightstate_runner.wiring import build_pump, open_services
from flightstate_testing.traffic import generate_day
from tests.fixtures.util import unique_name
from tests.pump.gap_writers import Writer, create_table, unprocessed_ids
from tests.runner._cli import run_cli

pytestmark = [pytest.mark.pg, pytest.mark.mysql, pytest.mark.slow]


def ok(*args: str, env: dict[str, str]) -> str:
    result = run_cli(*args, env=env)
    assert result.returncode == 0, f"{args}: {result.stderr[-3000:]}"
    return result.stdout


def status(env: dict[str, str]) -> dict[str, Any]:
    return dict(json.loads(ok("status", "--json", env=env)))


def test_late_row_applied_and_visible_in_status(pg_db: str, mysql_dsn: str) -> None:
    table = unique_name("cmin")
    env = {"FLIGHTSTATE_PG_DSN": pg_db, "FLIGHTSTATE_MYSQL_DSN": mysql_dsn,
           "FLIGHTSTATE_INBOX_TABLE": table, "FLIGHTSTATE_POLL_INTERVAL": "0.1",
           "FLIGHTSTATE_GAP_GRACE": "0.2", "FLIGHTSTATE_LEASE_TTL": "3"}  # fmt: skip
    ok("migrate", env=env)
    create_table("mysql", mysql_dsn, table)
    texts = iter(generate_day(seed=3, flights=4, messages=10))
    w1, w2 = Writer("mysql", mysql_dsn, table), Writer("mysql", mysql_dsn, table)
    try:
        w2.insert(next(texts))
        w2.commit()
        n = w1.insert(next(texts))
        w2.insert(next(texts))
        w2.commit()
        ok("run", "--until-idle", env=env)
        before = status(env)
        assert before["inbox"]["cursor"] == n + 1
        assert before["inbox"]["gaps"]["open"] == 1
        assert before["inbox"]["gaps"]["listed"][0]["low"] == n
        assert before["inbox"]["gaps"]["late_rows"] == 0
        assert "gaps:     1 open (1 id(s))" in ok("status", env=env)
        w1.commit()
    finally:
        w1.close()
        w2.close()
    run = run_cli("run", "--until-idle", env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    late_lines = [json.loads(line) for line in run.stderr.splitlines()
                  if line.startswith("{") and '"late": true' in line]  # fmt: skip
    assert [line["message_id"] for line in late_lines] == [n]
    after = status(env)
    assert after["inbox"]["gaps"]["open"] == 0
    assert after["inbox"]["gaps"]["late_rows"] == 1
    assert unprocessed_ids("mysql", mysql_dsn, table) == []
    with psycopg.connect(pg_db) as conn:
        row = conn.execute("SELECT LATE FROM PROC_STATE WHERE MESSAGE_ID = %s", (n,)).fetchone()
    assert row == (True,)


def test_gap_settings_are_validated_and_metric_names_are_fixed() -> None:
    for name, bad in (("gap_grace", "nan"), ("gap_horizon", "inf"), ("gap_grace", "-1"),
                      ("gap_reconcile_window", "0")):  # fmt: skip
        with pytest.raises(ConfigError, match=name):
            load_config(environ={f"FLIGHTSTATE_{name.upper()}": bad})
    with pytest.raises(ConfigError, match="gap_horizon"):
        load_config(environ={"FLIGHTSTATE_GAP_GRACE": "30", "FLIGHTSTATE_GAP_HORIZON": "10"})
    names = {metric.name for metric in RunnerMetrics().registry.collect()}
    assert {"flightstate_inbox_gaps_open", "flightstate_inbox_oldest_gap_age_seconds",
            "flightstate_inbox_late_rows", "flightstate_inbox_gaps_abandoned"} <= names  # fmt: skip


def test_late_rows_and_gaps_reach_the_prometheus_metrics(pg_db: str) -> None:
    flightstate_pg.migrate(pg_db)
    config = load_config(environ={"FLIGHTSTATE_PG_DSN": pg_db, "FLIGHTSTATE_INBOX": "store"})
    services = open_services(config)
    metrics = RunnerMetrics()
    log = logging.getLogger("test.gaps")
    try:
        texts = generate_day(seed=5, flights=2, messages=6)
        service = ServiceProcessor(services.store, config.core())
        observed = ObservedProcessor(service, metrics, log)
        first = InboxRow(5, texts[0], gaps_below=(GapRange(3, 4, datetime.now(UTC)),))
        observed.process_batch([first], 0)
        observed.process_batch([InboxRow(3, texts[1], late=True), InboxRow(6, texts[2])], 0)
        assert metrics.registry.get_sample_value("flightstate_inbox_late_rows_total") == 1
        runner = Runner(services, metrics, log, bootstrap=None, until_idle=True)
        runner.pump = build_pump(services, metrics, until_idle=True, log=log)
        runner.pump.stats.gaps_abandoned = 2
        runner._refresh_gap_metrics()
        runner._refresh_gap_metrics()  # counted once
        sample = metrics.registry.get_sample_value
        assert sample("flightstate_inbox_gaps_open") == 1  # 4 is still open
        assert sample("flightstate_inbox_oldest_gap_age_seconds") >= 0
        assert sample("flightstate_inbox_gaps_abandoned_total") == 2
    finally:
        services.close()

"""``migrate``/``inbox-init``/``generate``/``topics``/``run``/``status`` against MariaDB,
PostgreSQL and a tansu broker, each command a subprocess as an operator would run it."""

from __future__ import annotations

import json
import signal
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import psycopg
import pymysql
import pytest

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.wire import wire
from flightstate_mysql import parse_mysql_dsn
from flightstate_pg import PgStore
from tests.fixtures.kafka import read_topic
from tests.fixtures.util import unique_name
from tests.runner._cli import REPO, clean_env, run_cli, runner_argv

pytestmark = [pytest.mark.pg, pytest.mark.mysql, pytest.mark.kafka, pytest.mark.slow]


def ok(*args: str, env: dict[str, str]) -> str:
    result = run_cli(*args, env=env)
    assert result.returncode == 0, f"{args}: {result.stderr[-3000:]}"
    return result.stdout


def mysql_rows(dsn: str, table: str) -> list[tuple[Any, ...]]:
    conn = pymysql.connect(autocommit=True, **parse_mysql_dsn(dsn))
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT CMINMSGS_ID, CMINMSGS_STATUS, CMINMSGS_DATE_PROCESSED "
                        f"FROM `{table}` ORDER BY CMINMSGS_ID")  # fmt: skip
            return list(cur.fetchall())
    finally:
        conn.close()


@pytest.fixture
def env(pg_db: str, mysql_dsn: str, kafka_bootstrap: str) -> dict[str, str]:
    return {
        "FLIGHTSTATE_PG_DSN": pg_db,
        "FLIGHTSTATE_MYSQL_DSN": mysql_dsn,
        "FLIGHTSTATE_KAFKA_BOOTSTRAP": kafka_bootstrap,
        "FLIGHTSTATE_INBOX_TABLE": unique_name("cmin"),
        "FLIGHTSTATE_TOPIC_SCHD": unique_name("schd"),
        "FLIGHTSTATE_TOPIC_MSG": unique_name("msg"),
        "FLIGHTSTATE_POLL_INTERVAL": "0.1",
        "FLIGHTSTATE_LEASE_TTL": "3",
    }


def _status(env: dict[str, str]) -> dict[str, Any]:
    return json.loads(ok("status", "--json", env=env))


def test_generated_day_until_idle(env: dict[str, str], kafka_bootstrap: str) -> None:
    assert "applied" in ok("migrate", env=env)
    assert "ready" in ok("inbox-init", env=env)
    assert "created" in ok("topics", env=env)
    generated = run_cli("generate", "--messages", "500", "--flights", "50", env=env)
    assert generated.returncode == 0, generated.stderr[-3000:]
    inserted = int(generated.stdout.split()[1])
    assert f"generate: {inserted}/{inserted} row(s) inserted" in generated.stderr  # progress
    before = _status(env)
    assert before["inbox"]["lag"] == inserted
    assert before["inbox"]["head_age_s"] is not None

    ok("run", "--until-idle", env=env)

    status = _status(env)
    assert status["inbox"]["lag"] == 0
    assert status["inbox"]["cursor"] == status["inbox"]["last_id"] or status["inbox"]["lag"] == 0
    assert status["outbox"]["backlog"] == 0
    assert status["backfill_backlog"] == 0
    assert sum(status["outcomes"].values()) == inserted
    assert status["outcomes"]["DEAD"] == sum(r["count"] for r in status["dead_by_reason"])
    assert len(status["dead"]) == min(10, status["outcomes"]["DEAD"])  # the newest ids
    assert status["leader"]["active"] is False  # released on exit
    text = run_cli("status", env=env).stdout
    assert "lag 0 message(s)" in text
    assert "0 undelivered event(s)" in text

    rows = mysql_rows(env["FLIGHTSTATE_MYSQL_DSN"], env["FLIGHTSTATE_INBOX_TABLE"])
    assert len(rows) == inserted
    assert all(status_ in status["outcomes"] and done is not None for _, status_, done in rows)

    with psycopg.connect(env["FLIGHTSTATE_PG_DSN"]) as conn:
        notices = conn.execute("SELECT count(*) FROM MSG_EVENT WHERE TOPIC = 'msg'").fetchone()
    expected = int(notices[0]) if notices else 0
    records = read_topic(kafka_bootstrap, env["FLIGHTSTATE_TOPIC_MSG"], expected + 1, timeout=20)
    assert len(records) == expected  # every notification published, none twice
    _last_schd_record_is_the_stored_state(env, kafka_bootstrap)


def _last_schd_record_is_the_stored_state(env: dict[str, str], bootstrap: str) -> None:
    """Per FLID, the last ``schd`` record is the wire form of the state read back
    from PostgreSQL; a deleted flight's last record is a tombstone."""
    with psycopg.connect(env["FLIGHTSTATE_PG_DSN"]) as conn:
        snapshots = conn.execute("SELECT count(*) FROM MSG_EVENT WHERE TOPIC = 'schd'").fetchone()
    ceiling = int(snapshots[0]) + 1 if snapshots else 1  # coalescing may send fewer
    last: dict[str, bytes | None] = {}
    for record in read_topic(bootstrap, env["FLIGHTSTATE_TOPIC_SCHD"], ceiling, timeout=10):
        last[record.key().decode()] = record.value()
    store = PgStore(env["FLIGHTSTATE_PG_DSN"])
    try:
        states = {state.flid: state for state in store.iter_flights()}
    finally:
        store.close()
    assert set(last) == set(states)
    deleted = [flid for flid, state in states.items() if state.is_deleted]
    assert deleted, "the generated day deletes some flights"
    for flid, state in states.items():
        expected = None if state.is_deleted else wire(state, CoreConfig())
        assert last[flid] == expected, flid


def _scrape(port: int) -> dict[str, float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
        text = reply.read().decode()
    values: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            values[name] = float(value)
    return values


def test_run_serves_metrics_and_stops_on_sigterm(env: dict[str, str], tmp_path: Path) -> None:
    ok("migrate", env=env)
    inserted = int(ok("generate", "--messages", "300", "--flights", "30", env=env).split()[1])
    port = 20000 + int(time.time() * 1000) % 9000
    log_path = tmp_path / "run.log"  # a file, not a pipe: nobody drains a pipe meanwhile
    with log_path.open("w") as log_file:
        proc = subprocess.Popen(runner_argv("run", "--metrics-port", str(port)),
                                env=clean_env(env), stdout=subprocess.DEVNULL, stderr=log_file,
                                cwd=REPO)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        metrics: dict[str, float] = {}
        while time.monotonic() < deadline:
            time.sleep(1)
            try:
                metrics = _scrape(port)
            except OSError:
                continue
            done = sum(v for k, v in metrics.items() if k.startswith("flightstate_messages_total"))
            if (
                done == inserted
                and metrics.get("flightstate_outbox_backlog") == 0
                and metrics.get("flightstate_inbox_lag_messages") == 0
                and metrics.get("flightstate_inbox_cursor", 0) > 0
            ):
                break
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    stderr = log_path.read_text()
    tail = "\n".join(line for line in stderr.splitlines() if '"message"' not in line)[-3000:]
    assert proc.returncode == 0, tail
    assert metrics.get("flightstate_leader") == 1, tail
    assert metrics["flightstate_transaction_seconds_count"] > 0
    assert metrics.get("flightstate_inbox_lag_messages") == 0, tail
    assert metrics.get("flightstate_outbox_backlog") == 0
    assert metrics.get("flightstate_backfill_backlog") == 0
    assert metrics['flightstate_events_published_total{topic="msg"}'] > 0
    lines = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    finished = [line for line in lines if line.get("event") == "message"]
    assert len(finished) == inserted  # one JSON line per message outcome
    assert {"message_id", "outcome", "TYPE", "STYP", "FLID", "duration_ms"} <= set(finished[0])
    # FLID has one type whatever the message: the flights it changed, else the one it named
    assert all(isinstance(line["FLID"], list) for line in finished)
    assert {len(line["FLID"]) for line in finished} >= {0, 1}
    assert any(len(line["FLID"]) > 1 for line in finished)  # the schedule packages
    assert "s3cr3t" not in stderr

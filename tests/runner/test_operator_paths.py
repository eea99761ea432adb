"""The operator paths (docs/design.md, "Operator view"), each run as an operator runs it:
the CLI as a subprocess on real PostgreSQL (and, for ``topics``, a port where no broker
listens)."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from flightstate_pg.inbox import create_inbox_table, insert_messages
from flightstate_testing.ports import free_local_port
from flightstate_testing.traffic import TrafficGenerator
from tests.fixtures.util import unique_name
from tests.runner._cli import REPO, clean_env, run_cli, runner_argv


def _ok(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    result = run_cli(*args, env=env)
    assert result.returncode == 0, f"{args}: {result.stderr[-3000:]}"
    return result


def _count(dsn: str, query: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(query).fetchone()
    return int(row[0]) if row else 0


# ---------------------------------------------------------------------- item 1


def test_topics_with_the_broker_down_is_one_line_naming_it() -> None:
    bootstrap = f"127.0.0.1:{free_local_port()}"
    result = run_cli("topics", "--timeout", "2",
                     env={"FLIGHTSTATE_KAFKA_BOOTSTRAP": bootstrap})  # fmt: skip
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr[-3000:]  # no librdkafka chatter on stderr
    assert lines[0].startswith(f"error: no Kafka broker answered at {bootstrap} within 2 s")
    assert result.stdout == ""


# ---------------------------------------------------------------------- item 4


@pytest.mark.pg
@pytest.mark.parametrize("command", [
    "status", "show 7", "history 7", "republish", "cleanup", "requeue 5", "run --until-idle",
])  # fmt: skip
def test_commands_before_migrate_say_run_migrate_first(pg_db: str, command: str) -> None:
    result = run_cli(*command.split(), env={"FLIGHTSTATE_PG_DSN": pg_db,
                                            "FLIGHTSTATE_INBOX": "store"})  # fmt: skip
    assert result.returncode == 1
    assert "run `flightstate migrate` first" in result.stderr
    assert "does not exist" not in result.stderr
    assert "psycopg" not in result.stderr  # no stray driver warning
    assert "Traceback" not in result.stderr


# ---------------------------------------------------------------------- a processed day


@pytest.fixture
def day(pg_db: str) -> dict[str, Any]:
    """A PG-table inbox with a generated day: the generate and run outputs, and the env."""
    env = {"FLIGHTSTATE_PG_DSN": pg_db, "FLIGHTSTATE_INBOX": "store",
           "FLIGHTSTATE_INBOX_TABLE": unique_name("cmin"),
           "FLIGHTSTATE_POLL_INTERVAL": "0.1"}  # fmt: skip
    _ok("migrate", env=env)
    generated = _ok("generate", "--messages", "2100", "--flights", "60", env=env)
    before = _ok("status", env=env).stdout
    ran = _ok("--text-logs", "run", "--until-idle", env=env)
    return {"env": env, "dsn": pg_db, "generated": generated, "before": before, "ran": ran}


@pytest.mark.pg
def test_text_logs_keep_the_fields(day: dict[str, Any]) -> None:  # item 5
    dead = [line for line in day["ran"].stderr.splitlines() if "outcome=DEAD" in line]
    assert dead, day["ran"].stderr[-2000:]
    for line in dead:
        assert re.search(r" message_id=\d+ ", line), line
        assert " reason=" in line, line
        assert not line.lstrip().startswith("{")  # text, not JSON
    assert any(" TYPE=FLOP " in line and " STYP=" in line for line in dead)
    with_flid = [line for line in dead if re.search(r" FLID=\d+ ", line)]
    assert with_flid  # DEAD FLOPs still name the flight they were about
    done = [line for line in day["ran"].stderr.splitlines() if "outcome=SUCCEEDED" in line]
    assert any(re.search(r" FLID=\d+(,\d+)+ ", line) for line in done)  # a package's flights
    assert not any("FLID=[" in line for line in day["ran"].stderr.splitlines())


@pytest.mark.pg
def test_generate_progress_is_lines_off_a_terminal(day: dict[str, Any]) -> None:  # item 8
    stderr = day["generated"].stderr
    assert "\r" not in stderr
    progress = [line for line in stderr.splitlines() if line.startswith("generate: ")]
    assert len(progress) == 2  # 2,000-row chunks of 2,100 rows
    assert progress[-1].startswith("generate: 2100/2100")


@pytest.mark.pg
def test_status_counts_dead_by_reason(day: dict[str, Any]) -> None:  # item 8
    assert "cursor none (nothing processed yet)" in day["before"]
    assert "cursor None" not in day["before"]
    report = json.loads(_ok("status", "--json", env=day["env"]).stdout)
    text = _ok("status", env=day["env"]).stdout
    dead_total = report["outcomes"]["DEAD"]
    by_reason = report["dead_by_reason"]
    assert sum(r["count"] for r in by_reason) == dead_total
    assert len(by_reason) < dead_total  # the generator repeats a few reasons
    assert f"DEAD:     {dead_total} message(s), by reason" in text
    for row in by_reason:
        assert f"{row['count']:>6}  {row['reason']}  (newest #{row['newest_id']})" in text
    reason_lines = [line for line in text.splitlines() if "(newest #" in line]
    assert len(reason_lines) == len(by_reason)  # one line per reason, not per message
    assert "FAILED schedule requests" not in text  # no empty heading


@pytest.mark.pg
def test_show_and_history_read_at_a_glance(day: dict[str, Any]) -> None:  # item 8
    env = day["env"]
    full = json.loads(_ok("show", "--json", "7", env=env).stdout)
    text = _ok("show", "7", env=env).stdout
    set_scalars = {k: v for k, v in full.items() if v not in (None, [], {})
                   and not isinstance(v, list | dict)}  # fmt: skip
    for key, value in set_scalars.items():
        assert re.search(rf"^{re.escape(key)} +{re.escape(str(value))}$", text, re.M), key
    unset = [k for k, v in full.items() if v is None]
    assert unset
    lines = text.splitlines()
    assert not any(re.match(rf"{re.escape(k)}\b", line) for k in unset for line in lines)
    assert "null" not in text
    assert len(text.splitlines()) < len(full) / 2

    history = json.loads(_ok("history", "--json", "7", env=env).stdout)
    header, *lines = _ok("history", "7", env=env).stdout.splitlines()
    assert header.split()[:2] == ["message", "TYPE/STYP"]
    assert "sent (DTTM, airport time)" in header
    assert len(lines) == len(history)
    for entry, line in zip(history, lines, strict=True):
        assert line.startswith(f"#{entry['messageId']} ")
        assert f"{entry['type']}/{entry['styp']}" in line
        assert entry["change"] in line


@pytest.mark.pg
@pytest.mark.parametrize("command", ["show", "history", "republish --flid"])
def test_unknown_flid_exits_1_everywhere(day: dict[str, Any], command: str) -> None:  # item 8
    events = _count(day["dsn"], "SELECT count(*) FROM MSG_EVENT")
    result = run_cli(*command.split(), "NOPE999", env=day["env"])
    assert result.returncode == 1
    assert "no flight NOPE999" in result.stderr
    if command == "show":  # a flight cleanup archived is not current: history still has it
        assert "`flightstate history NOPE999` lists its messages" in result.stderr
    assert result.stdout == ""  # no `[]`, no "0 record(s) written"
    assert _count(day["dsn"], "SELECT count(*) FROM MSG_EVENT") == events  # nothing written


@pytest.mark.pg
def test_metrics_port_in_use_names_the_setting(day: dict[str, Any]) -> None:  # item 8
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))  # noqa: S104 - the metrics server binds every address
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli("run", "--until-idle", "--metrics-port", str(port), env=day["env"])
    assert result.returncode == 2
    assert f"metrics_port: cannot serve metrics on port {port}" in result.stderr
    assert "Address already in use" in result.stderr


# ---------------------------------------------------------------------- item 6


def _codeshare_inbox(dsn: str, table: str) -> None:
    """Flights 1 (master), 2 and 3 (its codeshares, MAID 1), 4 on its own."""
    gen = TrafficGenerator(seed=3)
    share = "<CSOP>MU</CSOP><CSFT>MU5000</CSFT><MAID>1</MAID>"
    raws = [gen.schedule("DNLD", [1, 2, 3, 4])]
    raws += [gen.flop("CSOP", flid, share) for flid in (2, 3)]
    with psycopg.connect(dsn) as conn:
        create_inbox_table(conn, table)
        insert_messages(conn, raws, table=table)


@pytest.mark.pg
def test_cleanup_reads_the_settings_and_explains_related_flights(pg_db: str) -> None:
    env = {"FLIGHTSTATE_PG_DSN": pg_db, "FLIGHTSTATE_INBOX": "store",
           "FLIGHTSTATE_INBOX_TABLE": unique_name("cmin"),
           "FLIGHTSTATE_POLL_INTERVAL": "0.1"}  # fmt: skip
    _ok("migrate", env=env)
    _codeshare_inbox(pg_db, env["FLIGHTSTATE_INBOX_TABLE"])
    _ok("run", "--until-idle", env=env)
    assert _count(pg_db, "SELECT count(*) FROM FLIGHT_SCHD WHERE MAID = '1'") == 2

    # The defaults (3 days' retention) keep a flight of 2026-11-30 only until 2026-12-03.
    kept = _ok("cleanup", env={**env, "FLIGHTSTATE_RETENTION_DAYS": "3650"}).stdout
    assert "removed 0 flight(s)" in kept
    assert "more than 3650 day(s)" in kept

    settings = {**env, "FLIGHTSTATE_RETENTION_DAYS": "0", "FLIGHTSTATE_QUIET_DAYS": "0"}
    out = _ok("cleanup", "--limit", "1", env=settings).stdout
    assert "more than 0 day(s) past the operation day" in out
    assert "examined 1 candidate(s) (--limit 1)" in out
    assert "removed 3 flight(s) (3 tombstoned)" in out  # flight 1 and its two codeshares
    assert "2 of them were not candidates themselves" in out
    assert _count(pg_db, "SELECT count(*) FROM FLIGHT_SCHD") == 1

    # An option still wins over the setting.
    left = _ok("cleanup", "--retention-days", "3650", env=settings).stdout
    assert "removed 0 flight(s)" in left


# ---------------------------------------------------------------------- item 2


def _wait_for(predicate: Any, what: str, timeout: float = 90.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def runners(tmp_path: Path) -> Iterator[list[tuple[subprocess.Popen[str], Path]]]:
    started: list[tuple[subprocess.Popen[str], Path]] = []
    yield started
    for proc, _log in started:
        if proc.poll() is None:
            proc.terminate()
    for proc, _log in started:
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _start(holder: str, env: dict[str, str], tmp_path: Path,
           runners: list[tuple[subprocess.Popen[str], Path]]) -> Path:  # fmt: skip
    log = tmp_path / f"{holder}.log"
    with log.open("w") as handle:
        proc = subprocess.Popen(
            runner_argv("run", "--holder", holder),
            env=clean_env(env), stdout=subprocess.DEVNULL, stderr=handle, text=True, cwd=REPO,
        )  # fmt: skip
    runners.append((proc, log))
    return log


@pytest.mark.pg
@pytest.mark.slow
def test_standby_says_who_leads_and_status_lists_it(
    pg_db: str, tmp_path: Path, runners: list[tuple[subprocess.Popen[str], Path]]
) -> None:
    env = {"FLIGHTSTATE_PG_DSN": pg_db, "FLIGHTSTATE_INBOX": "store",
           "FLIGHTSTATE_INBOX_TABLE": unique_name("cmin"),
           "FLIGHTSTATE_POLL_INTERVAL": "0.1", "FLIGHTSTATE_LEASE_TTL": "60"}  # fmt: skip
    _ok("migrate", env=env)
    _ok("inbox-init", env=env)

    def status() -> dict[str, Any]:
        return json.loads(_ok("status", "--json", env=env).stdout)

    alpha_log = _start("alpha", env, tmp_path, runners)
    leader = _wait_for(lambda: (s := status()["leader"]) and s["since"] and s, "alpha to lead")
    assert leader["holder"] == "alpha"
    assert leader["active"]
    leading = [json.loads(line) for line in alpha_log.read_text().splitlines()
               if '"event": "leading"' in line]  # fmt: skip
    assert leading
    assert leading[0]["epoch"] == leader["epoch"]
    assert leading[0]["instance"] == leader["instance"]

    beta_log = _start("beta", env, tmp_path, runners)
    line = _wait_for(
        lambda: next(
            (json.loads(x) for x in beta_log.read_text().splitlines() if '"event": "standby"' in x),
            None,
        ),
        "beta to stand by",
    )
    assert line["msg"] == f"standing by, leader is alpha since {leader['since']}"
    assert (line["leader"], line["epoch"], line["holder"]) == ("alpha", leader["epoch"], "beta")

    report = _wait_for(lambda: (s := status())["standbys"] and s, "beta in status")
    assert [s["holder"] for s in report["standbys"]] == ["beta"]
    assert report["standbys"][0]["instance"] == line["instance"]
    assert report["leader"]["holder"] == "alpha"
    text = _ok("status", env=env).stdout
    assert (
        f"leader:   alpha [instance {leader['instance']}] (epoch {leader['epoch']}), "
        f"since {leader['since']}"
    ) in text
    assert re.search(r"^standby:  beta \[instance [0-9a-f]{12}\] \(last report ", text, re.M)

    for proc, _log in runners:
        proc.terminate()
        assert proc.wait(60) == 0
    assert status()["standbys"] == []  # stopped runners say so in their last heartbeat

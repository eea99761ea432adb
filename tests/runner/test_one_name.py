"""Runner processes started with one ``--holder`` name, on PostgreSQL, a MariaDB inbox and
tansu (docs/design.md, "Leadership, fencing and bounded waits"): every process is its own
lease instance, so one name never makes two leaders nor lets a restart keep an epoch.

(a) Started together: one leads, the other stands by and warns (WARNING, once per leader
    and epoch); when the leader stops, the standby takes over at a higher epoch.
(b) One after the other: the first is killed while its lease is live, the second (same
    name) stands by with the warning until that lease expires, then leads at a higher
    epoch; it is stopped, and a third one leads at once at a higher epoch again.

Checked each time: every epoch was led by one process and epochs rose in the order they
were taken; PROC_STATE/MSG_EVENT rows were inserted by one leading instance at a time (an
audit trigger records each inserting session's application_name, which names the
instance); no (FLID, STATE_VERSION) pair twice in ``schd``; per partition the epochs of the
records never go back, and each flight's last record is its stored state.
"""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path
from typing import Any

import psycopg
import pytest
from confluent_kafka import Message

from flightstate_core.engine.lease_identity import instance_holder, split_holder
from flightstate_pg.session import holder_application_name
from flightstate_testing.names import unique_name
from tests.runner._procs import (
    AUDIT_WRITERS,
    RunnerProc,
    assert_epochs_never_go_back,
    assert_last_record_is_state,
    drained,
    lease,
    ok,
    schd_records,
    wait_for,
)

pytestmark = [pytest.mark.pg, pytest.mark.mysql, pytest.mark.kafka, pytest.mark.slow]

NAME = "twin"
DRAIN_S = 300  # hang guards on a shared 2-core machine, not speed assertions
START_S = 120


@pytest.fixture
def env(pg_db: str, mysql_dsn: str, kafka_bootstrap: str) -> dict[str, str]:
    """A MariaDB inbox and a 30 s lease: a killed leader's lease stays live well past the
    start of the next process, whose warning is then certain."""
    return {
        "FLIGHTSTATE_PG_DSN": pg_db,
        "FLIGHTSTATE_MYSQL_DSN": mysql_dsn,
        "FLIGHTSTATE_KAFKA_BOOTSTRAP": kafka_bootstrap,
        "FLIGHTSTATE_INBOX_TABLE": unique_name("cmin"),
        "FLIGHTSTATE_TOPIC_SCHD": unique_name("schd"),
        "FLIGHTSTATE_TOPIC_MSG": unique_name("msg"),
        "FLIGHTSTATE_POLL_INTERVAL": "0.1",
        "FLIGHTSTATE_LEASE_TTL": "30",
        "FLIGHTSTATE_BACKOFF_INITIAL": "0.1",
        "FLIGHTSTATE_BACKOFF_MAX": "1",
        "FLIGHTSTATE_CLEANUP_INTERVAL": "0",
    }


def _prepare(env: dict[str, str]) -> None:
    ok("migrate", env=env)
    ok("inbox-init", env=env)
    ok("topics", env=env)
    with psycopg.connect(env["FLIGHTSTATE_PG_DSN"], autocommit=True) as conn:
        conn.execute(AUDIT_WRITERS)


def _generate(env: dict[str, str], messages: int, seed: int) -> int:
    out = ok("generate", "--messages", str(messages), "--flights", str(messages // 10),
             "--seed", str(seed), env=env)  # fmt: skip
    return int(out.split()[1])


def _leading(runners: list[RunnerProc]) -> list[tuple[str, int, str | None]]:
    """Every "leading (epoch E)" line of *runners*: (time, epoch, instance), by time."""
    return sorted((line["ts"], line["epoch"], line.get("instance"))
                  for runner in runners for line in runner.lines()
                  if line.get("event") == "leading")  # fmt: skip


def _has_led(runner: RunnerProc) -> bool:
    return bool(_leading([runner]))


def _warnings(runner: RunnerProc) -> list[dict[str, Any]]:
    """The runner's warnings that another process with its name leads."""
    return [line for line in runner.lines()
            if line.get("event") == "standby" and line["level"] == "WARNING"]  # fmt: skip


def _warned_about(runner: RunnerProc, instance: str) -> bool:
    return any(line["leader_instance"] == instance for line in _warnings(runner))


def _current_leader(dsn: str) -> str | None:
    """The instance of the live lease's holder."""
    _, holder, live = lease(dsn)
    return split_holder(holder)[1] if live else None


def _assert_one_leader_per_epoch(runners: list[RunnerProc], dsn: str) -> int:
    """Each epoch led by one process, epochs strictly rising in the order taken, the lease
    row at the last; how many acquisitions there were."""
    taken = _leading(runners)
    epochs = [epoch for _, epoch, _ in taken]
    assert epochs, "nobody led"
    assert epochs == sorted(set(epochs)), f"one epoch led twice, or epochs went back: {taken}"
    assert lease(dsn)[0] == epochs[-1]
    return len(taken)


def _assert_one_writer_at_a_time(runners: list[RunnerProc], dsn: str) -> None:
    """The inserting sessions, in insert order, change at most at each acquisition, and
    only ever belong to an instance that led."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        apps = [row[0] for row in conn.execute("SELECT app FROM fs_audit ORDER BY id")]
    assert apps, "nothing was written"
    runs = [app for app, _ in itertools.groupby(apps)]
    taken = _leading(runners)
    leaders = {holder_application_name(instance_holder(NAME, led))
               for _, _, led in taken if led is not None}  # fmt: skip
    assert set(runs) <= leaders, f"written by {set(runs)}, leaders {leaders}"
    assert len(runs) <= len(taken), f"writers alternated: {len(runs)} runs, {len(taken)} leads"


def _assert_no_snapshot_twice(records: list[Message]) -> None:
    pairs = Counter((record.key(), dict(record.headers() or [])["state-version"])
                    for record in records)  # fmt: skip
    twice = {pair: n for pair, n in pairs.items() if n > 1}
    assert not twice, f"{len(twice)} (FLID, STATE_VERSION) pairs sent more than once: " + str(
        list(twice.items())[:5]
    )


def _assert_warned_once_per_change(runner: RunnerProc) -> None:
    seen = [(line["leader_instance"], line["epoch"]) for line in _warnings(runner)]
    assert len(seen) == len(set(seen)), f"warned more than once per leader and epoch: {seen}"
    assert all(line["leader"] == NAME for line in _warnings(runner))
    assert runner.instance not in {instance for instance, _ in seen}


def _assert_published_once_in_order(env: dict[str, str], bootstrap: str) -> None:
    records = schd_records(bootstrap, env["FLIGHTSTATE_TOPIC_SCHD"])
    assert records
    _assert_no_snapshot_twice(records)
    assert_epochs_never_go_back(records)
    assert_last_record_is_state(env["FLIGHTSTATE_PG_DSN"], records)


def test_two_runners_started_together_with_one_name(
    env: dict[str, str], kafka_bootstrap: str, tmp_path: Path
) -> None:
    _prepare(env)
    dsn = env["FLIGHTSTATE_PG_DSN"]
    inserted = _generate(env, 1500, seed=1)
    runners = [RunnerProc(env, NAME, tmp_path, log_name=f"{NAME}-{n}") for n in (1, 2)]
    try:
        wait_for(lambda: any(_has_led(runner) for runner in runners), START_S, "a leader")
        wait_for(lambda: drained(env, inserted), DRAIN_S, "the first batch to drain")
        _assert_one_leader_per_epoch(runners, dsn)
        leading = _current_leader(dsn)
        assert leading is not None
        leader = next(r for r in runners if r.instance == leading)
        standby = next(r for r in runners if r is not leader)
        wait_for(lambda: _warned_about(standby, leading), START_S, "the standby's warning")
        assert leader.stop() == 0
        wait_for(lambda: _has_led(standby), START_S, "the standby to lead")
        inserted += _generate(env, 500, seed=2)
        wait_for(lambda: drained(env, inserted), DRAIN_S, "the second batch to drain")
    finally:
        codes = [runner.stop() for runner in runners]
    assert codes == [0, 0], [runner.text()[-3000:] for runner in runners]
    assert _assert_one_leader_per_epoch(runners, dsn) >= 2
    _assert_one_writer_at_a_time(runners, dsn)
    for runner in runners:
        _assert_warned_once_per_change(runner)
    _assert_published_once_in_order(env, kafka_bootstrap)


def test_runners_one_after_the_other_with_one_name(
    env: dict[str, str], kafka_bootstrap: str, tmp_path: Path
) -> None:
    _prepare(env)
    dsn = env["FLIGHTSTATE_PG_DSN"]
    inserted = _generate(env, 1000, seed=1)
    runners = [RunnerProc(env, NAME, tmp_path, log_name=f"{NAME}-1")]
    try:
        first = runners[0]
        wait_for(lambda: _has_led(first), START_S, "the first to lead")
        wait_for(lambda: drained(env, inserted), DRAIN_S, "the first batch to drain")
        first.kill()  # no release: its lease stays live for up to 30 s
        killed_epoch = lease(dsn)[0]
        second = RunnerProc(env, NAME, tmp_path, log_name=f"{NAME}-2")
        runners.append(second)
        wait_for(
            lambda: bool(_warnings(second)) or _has_led(second),
            START_S,
            "the restarted runner to warn or lead",
        )
        assert not _has_led(second), ("it led while the killed one's lease was live",
                                      _leading(runners))  # fmt: skip
        assert _warned_about(second, first.instance)
        inserted += _generate(env, 500, seed=2)
        wait_for(lambda: _has_led(second), START_S, "the second to lead")
        assert lease(dsn)[0] > killed_epoch
        wait_for(lambda: drained(env, inserted), DRAIN_S, "the second batch to drain")
        assert second.stop() == 0  # releases: the next one leads at once
        stopped_epoch = lease(dsn)[0]
        third = RunnerProc(env, NAME, tmp_path, log_name=f"{NAME}-3")
        runners.append(third)
        wait_for(lambda: _has_led(third), START_S, "the third to lead")
        assert lease(dsn)[0] > stopped_epoch
        inserted += _generate(env, 500, seed=3)
        wait_for(lambda: drained(env, inserted), DRAIN_S, "the third batch to drain")
    finally:
        codes = [runner.stop() for runner in runners]
    assert codes == [-9] + [0] * (len(codes) - 1), [runner.text()[-3000:] for runner in runners]
    assert _assert_one_leader_per_epoch(runners, dsn) >= 3
    _assert_one_writer_at_a_time(runners, dsn)
    for runner in runners:
        _assert_warned_once_per_change(runner)
    _assert_published_once_in_order(env, kafka_bootstrap)

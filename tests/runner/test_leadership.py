"""Leader + standby runners on PostgreSQL and tansu, frozen with SIGSTOP.

Only the leader dispatches, fenced by its epoch: every record carries its dispatcher's
epoch, and per partition no record of an older epoch follows one of a newer epoch; each
flight's last ``schd`` record is its stored state. A leader frozen while idle inside a
transaction (holding PIPELINE_LOCK) is replaced within the bound docs/operations.md
("Failover") states, and once woken commits nothing (an audit trigger records which session
inserted each PROC_STATE/MSG_EVENT row) and publishes nothing.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import psycopg
import pytest
from confluent_kafka import Message

from flightstate_core.engine.lease_identity import split_holder
from flightstate_runner.config import load_config
from tests.fixtures.kafka import read_topic
from tests.fixtures.util import unique_name
from tests.runner._procs import (
    AUDIT_WRITERS,
    RunnerProc,
    assert_epochs_never_go_back,
    assert_last_record_is_state,
    drained,
    epoch_of,
    leader,
    lease,
    ok,
    schd_records,
    wait_for,
)

pytestmark = [pytest.mark.pg, pytest.mark.kafka, pytest.mark.slow]


@pytest.fixture
def env(pg_db: str, kafka_bootstrap: str) -> dict[str, str]:
    """A PG-table inbox, short lease and session limits, small batches (many commits)."""
    return {
        "FLIGHTSTATE_PG_DSN": pg_db,
        "FLIGHTSTATE_INBOX": "store",
        "FLIGHTSTATE_KAFKA_BOOTSTRAP": kafka_bootstrap,
        "FLIGHTSTATE_INBOX_TABLE": unique_name("cmin"),
        "FLIGHTSTATE_TOPIC_SCHD": unique_name("schd"),
        "FLIGHTSTATE_TOPIC_MSG": unique_name("msg"),
        "FLIGHTSTATE_POLL_INTERVAL": "0.1",
        "FLIGHTSTATE_LEASE_TTL": "2",
        "FLIGHTSTATE_BACKOFF_INITIAL": "0.1",
        "FLIGHTSTATE_BACKOFF_MAX": "1",
        "FLIGHTSTATE_DB_LOCK_TIMEOUT": "1",
        "FLIGHTSTATE_DB_IDLE_IN_TRANSACTION_TIMEOUT": "2",
        "FLIGHTSTATE_DB_STATEMENT_TIMEOUT": "5",
        "FLIGHTSTATE_DISPATCH_BATCH": "50",
        "FLIGHTSTATE_CLEANUP_INTERVAL": "0",
    }


def _prepare(env: dict[str, str], messages: int, flights: int) -> int:
    ok("migrate", env=env)
    ok("inbox-init", env=env)
    ok("topics", env=env)
    return int(ok("generate", "--messages", str(messages), "--flights", str(flights),
                  env=env).split()[1])  # fmt: skip


def test_frozen_leader_and_standby_publish_in_epoch_order(
    env: dict[str, str], kafka_bootstrap: str, tmp_path: Path
) -> None:
    env["FLIGHTSTATE_BATCH_SIZE"] = "2"
    inserted = _prepare(env, 3000, 150)
    dsn = env["FLIGHTSTATE_PG_DSN"]
    runners = {name: RunnerProc(env, name, tmp_path) for name in ("A", "B")}
    chaos = random.Random(int(os.environ.get("FLIGHTSTATE_TEST_CHAOS_SEED", "17")))
    freezes = 0
    try:
        wait_for(lambda: leader(dsn) is not None, 60, "a leader")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not drained(env, inserted):
            holder = leader(dsn)
            name = holder if holder in runners and chaos.random() < 0.6 else chaos.choice("AB")
            runners[name].freeze()
            time.sleep(chaos.uniform(0.3, 4.0))  # beyond the 2 s lease: a takeover
            runners[name].thaw()
            freezes += 1
            time.sleep(chaos.uniform(0.2, 1.5))
        wait_for(lambda: drained(env, inserted), 180, "the pipeline to drain")
    finally:
        codes = {name: proc.stop() for name, proc in runners.items()}
    assert codes == {"A": 0, "B": 0}, {n: p.text()[-2000:] for n, p in runners.items()}
    epoch = lease(dsn)[0]
    assert epoch >= 3, f"only {epoch - 1} takeover(s) in {freezes} freezes: nothing was tested"

    records = schd_records(kafka_bootstrap, env["FLIGHTSTATE_TOPIC_SCHD"])
    assert records
    assert_epochs_never_go_back(records)
    assert {epoch_of(r) for r in records} <= set(range(1, epoch + 1))

    def uncommitted() -> list[Message]:
        return read_topic(kafka_bootstrap, env["FLIGHTSTATE_TOPIC_SCHD"], 10**7, timeout=15,
                          isolation="read_uncommitted")  # fmt: skip

    assert assert_last_record_is_state(dsn, records, uncommitted) >= 150  # codeshares too
    print(f"{freezes} freezes, {epoch - 1} takeovers, {len(records)} schd records")


_IDLE_IN_TRANSACTION = (
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
    "AND application_name = %s AND state = 'idle in transaction' AND backend_xid IS NOT NULL"
)


def _freeze_inside_transaction(runner: RunnerProc, dsn: str) -> int:
    """SIGSTOP *runner* while its store session is idle inside a transaction that holds
    PIPELINE_LOCK; return that backend's pid.

    The pid is read again once the runner is frozen (a frozen client sends nothing, so
    what the server shows then stays): the session seen idle in a transaction before the
    freeze may have committed meanwhile, and another of the runner's sessions be the one
    inside a transaction then."""
    with psycopg.connect(dsn, autocommit=True) as probe:
        for _ in range(2000):
            if probe.execute(_IDLE_IN_TRANSACTION, (runner.app,)).fetchone() is None:
                continue
            runner.freeze()
            inside = probe.execute(_IDLE_IN_TRANSACTION, (runner.app,)).fetchall()
            try:  # and holding the lock?
                probe.execute("BEGIN")
                probe.execute("SELECT 1 FROM pipeline_lock FOR UPDATE NOWAIT")
                probe.execute("ROLLBACK")
            except psycopg.errors.LockNotAvailable:
                probe.execute("ROLLBACK")
                if len(inside) == 1:
                    return int(inside[0][0])
            runner.thaw()
    raise AssertionError("never caught the leader idle inside a transaction")


def test_leader_frozen_inside_a_transaction(
    env: dict[str, str], kafka_bootstrap: str, tmp_path: Path
) -> None:
    env["FLIGHTSTATE_BATCH_SIZE"] = "20"
    inserted = _prepare(env, 6000, 200)
    dsn = env["FLIGHTSTATE_PG_DSN"]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(AUDIT_WRITERS)
    bound = load_config(environ=env).takeover_bound()
    a = RunnerProc(env, "A", tmp_path)
    b: RunnerProc | None = None
    try:
        wait_for(lambda: leader(dsn) == "A", 60, "A to lead")
        b = RunnerProc(env, "B", tmp_path)
        wait_for(lambda: "B" in _heartbeats(dsn), 60, "B to start")
        frozen_pid = _freeze_inside_transaction(a, dsn)
        frozen_epoch = lease(dsn)[0]
        took = wait_for(lambda: leader(dsn) == "B", bound + 30, "B to take over")
        assert took <= bound + 1, f"takeover took {took:.1f} s, bound {bound:.1f} s"
        print(f"takeover after a freeze inside a transaction: {took:.1f} s (bound {bound:.1f} s)")
        assert lease(dsn)[0] == frozen_epoch + 1
        # Its session was ended: the server releases the lock while aborting the
        # transaction, a moment before the backend leaves pg_stat_activity.
        wait_for(lambda: _backend_gone(dsn, frozen_pid), 10, "the frozen session to end")
        published_before = _count_epoch(kafka_bootstrap, env, frozen_epoch)
        with psycopg.connect(dsn, autocommit=True) as conn:
            woken_at = conn.execute("SELECT clock_timestamp()").fetchone()
        a.thaw()
        wait_for(lambda: drained(env, inserted), 180, "the pipeline to drain")
    finally:
        codes = [a.stop()] + ([b.stop()] if b is not None else [])
    assert codes == [0, 0], a.text()[-3000:]
    with psycopg.connect(dsn, autocommit=True) as conn:
        woken = woken_at[0] if woken_at else None
        after = conn.execute("SELECT tab, count(*) FROM fs_audit WHERE app = %s AND at >= %s "
                             "GROUP BY tab", (a.app, woken)).fetchall()  # fmt: skip
        before = conn.execute("SELECT count(*) FROM fs_audit WHERE app = %s", (a.app,)).fetchone()
    assert before is not None
    assert before[0] > 0  # A did commit while it led
    assert after == [], f"the woken ex-leader committed: {after}"
    assert _count_epoch(kafka_bootstrap, env, frozen_epoch) == published_before
    records = schd_records(kafka_bootstrap, env["FLIGHTSTATE_TOPIC_SCHD"])
    assert_epochs_never_go_back(records)
    assert_last_record_is_state(dsn, records)


def _backend_gone(dsn: str, pid: int) -> bool:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s",
                           (pid,)).fetchone()  # fmt: skip
    return row == (0,)


def _heartbeats(dsn: str) -> set[str | None]:
    """The holder names (without their instance) that wrote a heartbeat."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        return {split_holder(row[0])[0]
                for row in conn.execute("SELECT holder FROM runner_heartbeat")}  # fmt: skip


def _count_epoch(bootstrap: str, env: dict[str, str], epoch: int) -> int:
    records = schd_records(bootstrap, env["FLIGHTSTATE_TOPIC_SCHD"], timeout=10)
    return sum(1 for record in records if epoch_of(record) == epoch)

"""Gaps in the inbox ids (docs/design.md, "Gaps in the inbox ids"), randomized: several AODB
writer threads insert thousands of messages in transactions with random commit delays (some
rolled back) into a real inbox, while pump processes are SIGKILLed at random, at least 10
times. At the end every committed row is applied exactly once and backfilled, and no
rolled-back id was applied.

Short grace and horizon (real time: the pump is a separate process) make late rows,
abandoned gaps and the reconciliation all happen within the run."""

from __future__ import annotations

import random
import signal
import subprocess
import threading
import time
from pathlib import Path

import psycopg
import pytest

from flightstate_testing.traffic import generate_day
from tests.fixtures.util import unique_name
from tests.pump.gap_writers import Writer, committed_ids, create_table, unprocessed_ids
from tests.pump.harness import finish, start_pump

pytestmark = [pytest.mark.pg, pytest.mark.slow]

WRITERS = 4
MESSAGES = 2400
KILLS = 10
GAP_OPTIONS = ["--gap-grace", "0.2", "--gap-horizon", "3", "--gap-reconcile", "1"]


class Writers:
    """Writer threads sharing a message list; each records what it committed and what
    it rolled back."""

    def __init__(self, kind: str, dsn: str, table: str, seed: int) -> None:
        self.kind, self.dsn, self.table = kind, dsn, table
        self.messages = iter(generate_day(seed=seed, flights=40, messages=MESSAGES))
        self.lock = threading.Lock()
        self.committed: set[int] = set()
        self.rolled_back: set[int] = set()
        self.errors: list[BaseException] = []
        self.rng = random.Random(seed)
        self.threads = [threading.Thread(target=self._run, args=(i,)) for i in range(WRITERS)]

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def alive(self) -> bool:
        return any(thread.is_alive() for thread in self.threads)

    def join(self) -> None:
        for thread in self.threads:
            thread.join(timeout=600)

    def _take(self, count: int) -> list[str]:
        with self.lock:
            return [raw for _, raw in zip(range(count), self.messages, strict=False)]

    def _run(self, index: int) -> None:
        rng = random.Random(self.rng.random() + index)
        writer = Writer(self.kind, self.dsn, self.table)
        try:
            while raws := self._take(rng.randint(1, 3)):
                ids = [writer.insert(raw) for raw in raws]
                time.sleep(_commit_delay(rng))
                if rng.random() < 0.05:
                    writer.rollback()
                    with self.lock:
                        self.rolled_back.update(ids)
                else:
                    writer.commit()
                    with self.lock:
                        self.committed.update(ids)
        except BaseException as exc:
            self.errors.append(exc)
        finally:
            writer.close()


def _commit_delay(rng: random.Random) -> float:
    """Mostly short transactions, some past the grace, a few past the horizon."""
    roll = rng.random()
    if roll < 0.9:
        return rng.uniform(0, 0.02)
    if roll < 0.99:
        return rng.uniform(0.2, 1.0)
    return rng.uniform(3.5, 5.0)


@pytest.fixture(params=["mysql", "pg"])
def inbox(request: pytest.FixtureRequest, migrated_pg: str) -> tuple[str, str, str]:
    if request.param == "mysql":
        request.applymarker(pytest.mark.mysql)
        dsn = str(request.getfixturevalue("mysql_dsn"))
    else:
        dsn = migrated_pg
    table = unique_name("cminmsgs")
    create_table(request.param, dsn, table)
    return request.param, dsn, table


def _wait_leading(started: Path, pump: subprocess.Popen[str]) -> None:
    """Until the pump has committed once (it leads) or has ended (bounded)."""
    for _ in range(3000):
        if started.exists() or pump.poll() is not None:
            return
        time.sleep(0.01)


def test_every_committed_row_once_through_random_kills(
    inbox: tuple[str, str, str], migrated_pg: str, tmp_path: Path
) -> None:
    kind, dsn, table = inbox
    rng = random.Random(16)
    writers = Writers(kind, dsn, table, seed=16)
    writers.start()
    kills = 0
    while writers.alive() or kills < KILLS:
        started = tmp_path / f"leading-{kills}"
        leading = {"FS_PUMP_STARTED_FILE": str(started)}
        pump = start_pump(migrated_pg, dsn, table, until_idle=False, batch=50, ttl=1.0,
                          extra=GAP_OPTIONS, env=leading)  # fmt: skip
        _wait_leading(started, pump)
        time.sleep(rng.uniform(0.2, 2.5))  # killed at a random point of its work
        pump.send_signal(signal.SIGKILL)
        pump.communicate(timeout=60)
        kills += 1
    writers.join()
    assert writers.errors == []
    assert kills >= KILLS
    # Let every gap outlive the horizon, then drain: late rows, abandoned gaps, the
    # reconciliation below the cursor all have had their chance.
    time.sleep(3.5)
    stats = finish(start_pump(migrated_pg, dsn, table, until_idle=True, batch=50, ttl=1.0,
                              extra=GAP_OPTIONS))  # fmt: skip
    assert stats["last_error"] is None or "TransientError" in stats["last_error"]

    committed = set(committed_ids(kind, dsn, table))
    assert committed == writers.committed
    assert len(committed) + len(writers.rolled_back) >= MESSAGES
    with psycopg.connect(migrated_pg) as conn:
        procs = [int(r[0]) for r in conn.execute("SELECT MESSAGE_ID FROM PROC_STATE")]
        twice = conn.execute(
            "SELECT FLID, STATE_VERSION, count(*) FROM MSG_EVENT WHERE TOPIC = 'schd'"
            " GROUP BY FLID, STATE_VERSION HAVING count(*) > 1"
        ).fetchall()
        late = conn.execute("SELECT count(*) FROM PROC_STATE WHERE LATE").fetchone()
    assert len(procs) == len(set(procs))
    assert set(procs) == committed  # every committed row once, no rolled-back id
    assert not set(procs) & writers.rolled_back
    assert twice == []
    assert unprocessed_ids(kind, dsn, table) == []  # every row backfilled
    print(f"{kind}: {len(committed)} committed, {len(writers.rolled_back)} rolled back, "
          f"{kills} kills, {late[0] if late else 0} late")  # fmt: skip

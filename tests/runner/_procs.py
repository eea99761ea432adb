"""Runner processes for the failover tests: start, freeze (SIGSTOP), thaw, stop, read logs;
and the checks they share (the lease row, the drained pipeline, the schd topic)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import psycopg
from confluent_kafka import Message

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.wire import wire
from flightstate_core.engine.lease_identity import instance_holder, split_holder
from flightstate_pg import PgStore
from flightstate_pg.session import holder_application_name
from flightstate_runner.config import load_config
from flightstate_runner.status import collect
from tests.fixtures.kafka import read_topic
from tests.runner._cli import REPO, clean_env, run_cli, runner_argv


def ok(*args: str, env: Mapping[str, str]) -> str:
    """Run one runner command; it must exit 0."""
    result = run_cli(*args, env=env)
    assert result.returncode == 0, f"{args}: {result.stderr[-3000:]}"
    return result.stdout


class RunnerProc:
    """``run --holder NAME`` in the background, stderr (JSON lines) to a file."""

    def __init__(self, env: Mapping[str, str], holder: str, tmp: Path, *args: str,
                 log_name: str | None = None) -> None:  # fmt: skip
        """*log_name*: the log file's name (default from *holder*; give processes that
        share a holder name their own)."""
        self.holder = holder
        self.log_path = tmp / f"runner-{log_name or holder}.log"
        with self.log_path.open("w") as log_file:
            self.proc = subprocess.Popen(
                runner_argv("run", "--holder", holder, *args), env=clean_env(env),
                stdout=subprocess.DEVNULL, stderr=log_file, cwd=REPO,
            )  # fmt: skip
        self.frozen = False
        self._instance: str | None = None

    @property
    def instance(self) -> str:
        """Its lease instance id, from its log (waits for the line once)."""
        found: list[str] = []

        def logged() -> bool:
            found.extend(line["instance"] for line in self.lines()
                         if line.get("event") == "instance")  # fmt: skip
            return bool(found)

        if self._instance is None:
            wait_for(logged, 60, f"{self.holder}'s instance line")
            self._instance = found[0]
        return self._instance

    @property
    def app(self) -> str:
        """Its sessions' application_name (the lease row's ``name#instance``)."""
        return holder_application_name(instance_holder(self.holder, self.instance))

    def freeze(self) -> None:
        os.kill(self.proc.pid, signal.SIGSTOP)
        self.frozen = True

    def thaw(self) -> None:
        os.kill(self.proc.pid, signal.SIGCONT)
        self.frozen = False

    def wait(self, timeout: float) -> int:
        return self.proc.wait(timeout=timeout)

    def kill(self) -> None:
        """SIGKILL (no release: its lease stays until it expires) and reap it."""
        self.proc.kill()
        self.proc.wait(timeout=60)

    def stop(self) -> int:
        """SIGCONT + SIGTERM, wait; SIGKILL if it does not end (the test fails then)."""
        if self.proc.poll() is None:
            self.thaw()
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def text(self) -> str:
        return self.log_path.read_text()

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.text().splitlines() if line.startswith("{")]


def wait_for(check: Callable[[], bool], timeout: float, what: str, every: float = 0.1) -> float:
    """Poll *check* until true; the seconds it took (AssertionError naming *what* after
    *timeout*: a hang guard, not a speed assertion)."""
    started = time.monotonic()
    while not check():
        if time.monotonic() - started > timeout:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(every)
    return time.monotonic() - started


def lease(dsn: str) -> tuple[int, str | None, bool]:
    """(EPOCH, HOLDER, unexpired) of the pipeline lease."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT EPOCH, HOLDER, LEASE_EXPIRES_AT > clock_timestamp() "
            "FROM PIPELINE_LOCK WHERE LOCK_NAME = 'pipeline'"
        ).fetchone()
    assert row is not None
    return int(row[0]), row[1], bool(row[2])


#: An audit trigger naming the session (application_name: the runner and its instance) that
#: inserted each PROC_STATE and MSG_EVENT row, in insert order (``id``) and time (``at``):
#: tests tell from it which process wrote while another led.
AUDIT_WRITERS = """
CREATE TABLE fs_audit (id bigserial PRIMARY KEY, tab text, app text,
                       at timestamptz DEFAULT clock_timestamp());
CREATE FUNCTION fs_audit_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO fs_audit (tab, app) VALUES (TG_TABLE_NAME, current_setting('application_name'));
  RETURN NULL;
END $$;
CREATE TRIGGER fs_audit_proc AFTER INSERT ON proc_state
  FOR EACH ROW EXECUTE FUNCTION fs_audit_row();
CREATE TRIGGER fs_audit_event AFTER INSERT ON msg_event
  FOR EACH ROW EXECUTE FUNCTION fs_audit_row();
"""


def leader(dsn: str) -> str | None:
    """The holder name of a live lease (without its instance), or None."""
    _, holder, live = lease(dsn)
    return split_holder(holder)[0] if live else None


def status(env: Mapping[str, str]) -> dict[str, Any]:
    """``status`` in this process (no interpreter start per poll)."""
    return collect(load_config(environ=dict(env)))


def drained(env: Mapping[str, str], inserted: int) -> bool:
    """Every message finished, backfilled and its events delivered."""
    try:
        report = status(env)
    except Exception:  # the store may be coming back
        return False
    return (sum(report["outcomes"].values()) == inserted and report["inbox"]["lag"] == 0
            and report["backfill_backlog"] == 0 and report["outbox"]["backlog"] == 0)  # fmt: skip


def schd_records(bootstrap: str, topic: str, timeout: float = 15) -> list[Message]:
    """Every record of the topic (read until *timeout*), in per-partition offset order."""
    records = read_topic(bootstrap, topic, 10**7, timeout=timeout)
    return sorted(records, key=lambda m: (m.partition(), m.offset()))


def epoch_of(record: Message) -> int:
    """The ``fs-epoch`` header of a published record (it must have one)."""
    headers = dict(record.headers() or [])
    assert "fs-epoch" in headers, headers
    return int(headers["fs-epoch"])


def assert_epochs_never_go_back(records: list[Message]) -> None:
    """Per partition, no record of an older epoch after one of a newer epoch: no stale
    dispatcher published after a newer leader did."""
    last: dict[int, int] = {}
    for record in records:
        epoch = epoch_of(record)
        part = record.partition()
        assert epoch >= last.get(part, 0), (part, record.offset(), epoch, last[part])
        last[part] = epoch


def assert_last_record_is_state(
    dsn: str, records: list[Message], uncommitted: Callable[[], list[Message]] | None = None
) -> int:
    """Per FLID, the last ``schd`` record is the stored state (a tombstone if deleted);
    returns how many flights were checked. *uncommitted* reads the topic read_uncommitted:
    when flights are missing, the failure then says whether their records reached the
    broker but stayed invisible to a read_committed reader (a transaction left open)."""
    last: dict[str, bytes | None] = {}
    for record in records:
        last[record.key().decode()] = record.value()
    store = PgStore(dsn)
    try:
        states = {state.flid: state for state in store.iter_flights()}
    finally:
        store.close()
    unpublished, unknown = sorted(set(states) - set(last)), sorted(set(last) - set(states))
    assert (unpublished, unknown) == ([], []), (
        f"{len(records)} records; stored, never published: {unpublished[:5]} "
        f"({len(unpublished)}); published, not stored: {unknown[:5]} ({len(unknown)}); "
        + _outbox_rows_of(dsn, unpublished[:3])
        + f"; per partition (count, last offset): "
        f"{_partition_ends(records)}" + _uncommitted_of(uncommitted, unpublished)
    )
    config = CoreConfig()
    stale = [flid for flid, state in states.items()
             if last[flid] != (None if state.is_deleted else wire(state, config))]  # fmt: skip
    assert not stale, f"{len(stale)} flights' last record is not their state: {stale[:5]}"
    return len(states)


def _outbox_rows_of(dsn: str, flids: list[str]) -> str:
    """The outbox watermark and the MSG_EVENT rows of *flids* (a failure's explanation)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        watermark = conn.execute("SELECT LAST_EVENT_ID FROM OUTBOX_WATERMARK").fetchall()
        rows = conn.execute(
            "SELECT FLID, EVENT_ID, TOPIC, KIND, STATE_VERSION, MESSAGE_ID, CREATED_AT, "
            "DISPATCHED_AT FROM MSG_EVENT WHERE FLID = ANY(%s) ORDER BY EVENT_ID", (flids,),
        ).fetchall()  # fmt: skip
    return f"watermark {watermark}, their events: {rows}"


def _uncommitted_of(read: Callable[[], list[Message]] | None, flids: list[str]) -> str:
    """How many of *flids* a read_uncommitted reader sees, and its per-partition ends
    (only computed for a failure's explanation)."""
    if read is None or not flids:
        return ""
    records = read()
    seen = {record.key().decode() for record in records if record.key() is not None}
    return (
        f"; read_uncommitted: {len(records)} records, {len(set(flids) & seen)} of the "
        f"{len(flids)} missing flights in them, per partition {_partition_ends(records)}"
    )


def _partition_ends(records: list[Message]) -> dict[int, tuple[int, int]]:
    """Per partition, how many records were read and the last offset (a partition whose
    reading stopped early, e.g. behind a transaction left open, shows here)."""
    ends: dict[int, tuple[int, int]] = {}
    for record in records:
        count, _ = ends.get(record.partition(), (0, -1))
        ends[record.partition()] = (count + 1, record.offset())
    return ends

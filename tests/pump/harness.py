"""Shared helpers of the pump tests: inbox tables, pump processes, store snapshots."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psycopg
import pymysql

from flightstate_core.domain.config import CoreConfig
from flightstate_core.pump import Backoff, Pump, PumpSettings, PumpStats, ServiceProcessor
from flightstate_mysql import MySqlInbox, create_cminmsgs, insert_messages, parse_mysql_dsn
from flightstate_pg import PgStore
from flightstate_pg.lease import PgLeaderLease

PUMP_SCRIPT = Path(__file__).with_name("pump_process.py")
REPO = Path(__file__).resolve().parents[2]


def mysql_conn(dsn: str) -> pymysql.connections.Connection[Any]:
    """A side connection (autocommit) for setup and inspection."""
    return pymysql.connect(autocommit=True, **parse_mysql_dsn(dsn))


def fill_mysql_inbox(dsn: str, table: str, raws: Sequence[str]) -> list[int]:
    """Create *table* (cminmsgs DDL) and insert *raws* in order."""
    conn = mysql_conn(dsn)
    try:
        create_cminmsgs(conn, table)
        return insert_messages(conn, raws, table=table)
    finally:
        conn.close()


def inbox_rows(dsn: str, table: str) -> list[tuple[Any, ...]]:
    """(id, STATUS, DATE_PROCESSED, SUBSYSTEM_TYPE, SUBSYSTEM_SUBTYPE) of every row."""
    conn = mysql_conn(dsn)
    try:
        with conn.cursor() as cur:
            cur.execute(
                "SELECT CMINMSGS_ID, CMINMSGS_STATUS, CMINMSGS_DATE_PROCESSED,"
                " CMINMSGS_SUBSYSTEM_TYPE, CMINMSGS_SUBSYSTEM_SUBTYPE"
                f" FROM `{table}` ORDER BY CMINMSGS_ID"
            )
            return list(cur.fetchall())
    finally:
        conn.close()


def run_pump_inline(pg: str, inbox_dsn: str, table: str, *, batch: int = 200) -> PumpStats:
    """Run one pump in this process until the inbox is drained and backfilled."""
    config = CoreConfig()
    store = PgStore(pg, config, inbox_name=table)
    inbox = MySqlInbox(inbox_dsn, table=table)
    lease = PgLeaderLease(pg)
    try:
        pump = Pump(
            processor=ServiceProcessor(store, config),
            inbox=inbox,
            lease=lease,
            backfills=store,
            read_cursor=store.inbox_cursor,
            settings=PumpSettings(
                holder="inline",
                batch_size=batch,
                stop_when_idle=True,
                idle_poll=0.05,
                retry=Backoff(0.01, 0.2),
            ),
        )
        return pump.run()
    finally:
        store.close()
        inbox.close()
        lease.close()


def start_pump(
    pg: str,
    inbox_dsn: str,
    table: str,
    *,
    holder: str | None = None,
    until_idle: bool = True,
    batch: int = 200,
    ttl: float = 2.0,
    env: dict[str, str] | None = None,
    extra: Sequence[str] = (),
) -> subprocess.Popen[str]:
    """Start tests/pump/pump_process.py; stdout (the stats JSON) is captured. *extra*:
    more options (the gap settings)."""
    argv = [sys.executable, str(PUMP_SCRIPT), "--pg", pg, "--inbox", inbox_dsn]
    argv += ["--table", table, "--batch", str(batch), "--ttl", str(ttl), "--poll", "0.1"]
    argv += list(extra)
    if holder:
        argv += ["--holder", holder]
    if until_idle:
        argv.append("--until-idle")
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env
    )


def finish(proc: subprocess.Popen[str], timeout: float = 300) -> dict[str, Any]:
    """Wait for a pump process that should exit 0; its stats."""
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, f"pump exited {proc.returncode}: {err[-3000:]}"
    return dict(json.loads(out.strip().splitlines()[-1]))


def _normal_payload(topic: str, payload: str | None) -> Any:
    if payload is None:
        return None
    value = json.loads(payload)
    if isinstance(value, dict):
        value.pop("updatedAt", None)  # wall-clock of the commit: differs between runs
    return value


def store_snapshot(pg: str) -> dict[str, Any]:
    """Everything the store decided, minus wall-clock times: flights, events, outcomes."""
    with psycopg.connect(pg) as conn:
        flights = conn.execute(
            "SELECT FLID, STATE, STATE_VERSION, OPERATION_DAY, LAST_MESSAGE_ID"
            " FROM FLIGHT_SCHD ORDER BY FLID"
        ).fetchall()
        events = [
            (topic, key, _normal_payload(topic, payload), flid, version, kind, mid)
            for topic, key, payload, flid, version, kind, mid in conn.execute(
                "SELECT TOPIC, EVENT_KEY, PAYLOAD, FLID, STATE_VERSION, KIND, MESSAGE_ID"
                " FROM MSG_EVENT ORDER BY EVENT_ID"
            ).fetchall()
        ]
        procs = conn.execute(
            "SELECT MESSAGE_ID, STATUS, REASON, IDENTITY_KEY, PAYLOAD_DIGEST, BACKFILL_STATUS"
            " FROM PROC_STATE ORDER BY MESSAGE_ID"
        ).fetchall()
    store = PgStore(pg)
    try:
        states = {
            s.flid: (s.status, s.version, s.operation_day, dict(s.scalars), dict(s.collections),
                     dict(s.documents), s.last_message_id)
            for s in store.iter_flights()
        }  # fmt: skip
    finally:
        store.close()
    return {"flights": flights, "states": states, "events": events, "procs": procs}

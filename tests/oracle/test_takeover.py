"""Takeover from a frozen leader on Oracle (``flightstate_oracle.takeover``): the decision on
V$SESSION rows, and the lease's whole path through the recording stand-in (what reaches the
driver). What only a server shows (the kill freeing the row lock) is in the README."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from flightstate_core.domain.errors import ConfigError, TransientError
from flightstate_oracle import _sql as sql
from flightstate_oracle.lease import OracleLeaderLease
from flightstate_oracle.session import (
    for_holder,
    holder_client_identifier,
    parse_oracle_url,
    pool_options,
)
from flightstate_oracle.takeover import SessionRow, sessions_to_end
from tests.oracle.boundary import boundary_problems
from tests.oracle.recording import Recorder, RecordingPool, oracle_error

EXPIRED = "pump#0123456789ab"
CLIENT = holder_client_identifier(EXPIRED)
FROZEN = SessionRow(12, 345, "flightstate", CLIENT, "INACTIVE", True, 95)


@pytest.mark.parametrize(
    ("row", "ended"),
    [
        (FROZEN, True),
        (SessionRow(12, 345, "flightstate", CLIENT, "ACTIVE", True, 95), False),  # in a call
        (SessionRow(12, 345, "flightstate", CLIENT, "INACTIVE", False, 95), False),  # no tx
        (SessionRow(12, 345, "SQL*Plus", CLIENT, "INACTIVE", True, 95), False),  # not ours
        (SessionRow(12, 345, "flightstate", "pump#other", "INACTIVE", True, 95), False),
    ],
)
def test_only_the_expired_holders_idle_sessions_inside_a_transaction(
    row: SessionRow, ended: bool
) -> None:
    assert sessions_to_end([row], CLIENT) == ([(12, 345)] if ended else [])


def test_the_client_identifier_keeps_the_instance_of_a_long_name() -> None:
    long = "x" * 200 + "#0123456789ab"
    assert holder_client_identifier(long).endswith("#0123456789ab")
    assert len(holder_client_identifier(long).encode()) == 64


def _session_rows(rows: list[SessionRow]) -> Any:
    columns = ["SID", "SERIAL_NO", "MODULE", "CLIENT_IDENTIFIER", "STATUS", "IN_TRANSACTION",
               "IDLE_SECONDS"]  # fmt: skip

    def answer(binds: Mapping[str, Any]) -> tuple[list[str], list[tuple[Any, ...]]]:
        assert binds == {"CLIENT_ID": CLIENT, "LOCK_NAME": "pipeline", "EXPIRED": EXPIRED}
        return columns, [(r.sid, r.serial, r.module, r.client_identifier, r.status,
                          int(r.in_transaction), r.idle_seconds) for r in rows]  # fmt: skip

    return answer


def _standby(rows: list[SessionRow], *, live: bool = False, frees: bool = True) -> Recorder:
    """A lease row held by EXPIRED (expired unless *live*) whose row lock a frozen session
    holds: the first FOR UPDATE WAIT ends in ORA-30006; after a kill, the next one not."""
    state = {"holder": EXPIRED}
    recorder = Recorder()

    def status(binds: Mapping[str, Any]) -> tuple[list[str], list[tuple[Any, ...]]]:
        return ["EPOCH", "HOLDER", "UNEXPIRED"], [(7, state["holder"], int(live))]

    def lock(binds: Mapping[str, Any]) -> tuple[list[str], list[tuple[Any, ...]]]:
        if not (frees and _kills(recorder)):
            raise oracle_error("ORA-30006: resource busy; acquire with WAIT timeout expired")
        return ["EPOCH"], [(7,)]

    def merged(binds: Mapping[str, Any]) -> tuple[list[str], list[tuple[Any, ...]]]:
        state["holder"] = binds["HOLDER"]
        return [], []

    recorder.answers.update(lease_status=status, lock_select=lock, lease_acquire=merged,
                            frozen_sessions=_session_rows(rows))  # fmt: skip
    return recorder


def _kills(recorder: Recorder) -> list[str]:
    return [t for t in recorder.texts() if t.startswith("ALTER SYSTEM")]


def test_a_standby_ends_the_frozen_holder_and_takes_over() -> None:
    recorder = _standby([FROZEN])
    lease = OracleLeaderLease(RecordingPool(recorder), instance="fedcba987654")  # type: ignore[arg-type]
    assert lease.try_acquire("pump", 30) == 7
    assert _kills(recorder) == ["ALTER SYSTEM KILL SESSION '12,345' IMMEDIATE"]
    assert recorder.names().count("lock_select") == 2
    assert boundary_problems(recorder.texts()) == []


@pytest.mark.parametrize(
    "rows",
    [[], [SessionRow(12, 345, "flightstate", CLIENT, "ACTIVE", True, 95)]],
    ids=["no-session-left", "inside-a-call"],
)
def test_nothing_to_end_leaves_the_wait_transient(rows: list[SessionRow]) -> None:
    recorder = _standby(rows)
    lease = OracleLeaderLease(RecordingPool(recorder))  # type: ignore[arg-type]
    with pytest.raises(TransientError, match="ORA-30006"):
        lease.try_acquire("pump", 30)
    assert _kills(recorder) == []


def test_a_live_lease_is_never_queued_for_nor_ended() -> None:
    recorder = _standby([FROZEN], live=True)
    lease = OracleLeaderLease(RecordingPool(recorder))  # type: ignore[arg-type]
    assert lease.try_acquire("pump", 30) is None
    assert "lock_select" not in recorder.names()
    assert _kills(recorder) == []


def test_without_the_grant_a_warning_names_it_and_the_wait_stays_transient(
    caplog: pytest.LogCaptureFixture,
) -> None:
    recorder = _standby([FROZEN], frees=False)
    recorder.refusals["ALTER SYSTEM"] = "ORA-01031: insufficient privileges"
    lease = OracleLeaderLease(RecordingPool(recorder))  # type: ignore[arg-type]
    with pytest.raises(TransientError, match="ORA-30006"):
        lease.try_acquire("pump", 30)
    assert "ALTER SYSTEM" in caplog.text
    assert "V_$SESSION" in caplog.text


def test_kill_session_formats_integers_only() -> None:
    assert sql.kill_session(1, 2).text == "ALTER SYSTEM KILL SESSION '1,2' IMMEDIATE"
    for bad in ("1", -1, True, 1.0):
        with pytest.raises(ValueError, match="integers"):
            sql.kill_session(bad, 2)  # type: ignore[arg-type]


def test_a_leaders_pool_sessions_carry_its_holders_client_identifier() -> None:
    settings = parse_oracle_url("oracle://u:p@h:1521/S")
    lease = OracleLeaderLease(RecordingPool(Recorder()), instance="0123456789ab")  # type: ignore[arg-type]
    named = for_holder(settings, lease.stored_holder("pump"))
    assert named.client_identifier == holder_client_identifier("pump#0123456789ab")
    recorder = Recorder()
    conn = recorder.connect()
    pool_options(named)["session_callback"](conn, None)  # type: ignore[operator]
    assert conn.client_identifier == "pump#0123456789ab"


@pytest.mark.parametrize("bad", ["?call_timeout=30000", "?call_timeout=0"])
def test_a_call_timeout_not_longer_than_the_lock_wait_is_refused(bad: str) -> None:
    with pytest.raises(ConfigError, match="FOR UPDATE WAIT"):
        parse_oracle_url("oracle://u:p@h:1521/S" + bad)
    assert parse_oracle_url("oracle://u:p@h:1521/S?call_timeout=31000").call_timeout_ms == 31000

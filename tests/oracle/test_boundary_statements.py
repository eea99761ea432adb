"""Every registered statement of the store, lease, outbox and operator code at the driver
boundary (tests/oracle/recording.py): the code paths that run them are driven through the
stand-in, then every registered statement not reached that way is executed through ``_db``
with each of its binds, so statements registered later (e.g. the runner's) are covered too.
The stand-in refuses a bind the text does not name and a named bind not supplied; every text
must then pass the 11g rules, with no trailing ``;`` and no quoting conflict."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.outbox import ParkedEvent
from flightstate_core.ports import DeadClaim
from flightstate_oracle import _sql as sql
from flightstate_oracle import session
from flightstate_oracle._db import query, run_many
from flightstate_oracle.lease import OracleLeaderLease
from flightstate_oracle.migrate import migrate_on
from flightstate_oracle.operator import flight_history, republish
from flightstate_oracle.outbox import OracleOutbox
from flightstate_oracle.store import OracleStore
from tests.lifecycle.helpers import CONFIG
from tests.oracle.boundary import boundary_problems
from tests.oracle.recording import Recorder, RecordingPool, bind_names

NOW = datetime(2026, 12, 5, 8, 0, tzinfo=UTC)


def _row(columns: list[str], *values: Any) -> Any:
    return lambda binds: (columns, [tuple(values)])


def _answers() -> dict[str, Any]:
    return {
        "lock_select": _row(["EPOCH"], 3),
        "watermark_select": _row(["LAST_EVENT_ID"], 5),
        "outbox_backlog": _row(["LAST_EVENT_ID", "N", "OLDEST_AGE"], 5, 2, timedelta(seconds=4)),
        "parked_count": _row(["N"], 0),
        "event_undelivered_ids": _row(["EVENT_ID"], 6),
        "dead_proc": _row(["REASON", "ATTEMPTS"], "/MSG/FLOP/ESTT: not a time", 2),
        "requeue_id": _row(["REQUEUE_ID"], 41),
    }


def drive_code_paths(recorder: Recorder) -> None:
    """The public entry points of store, transaction, outbox, lease and operator."""
    pool = RecordingPool(recorder)
    store = OracleStore(pool, CONFIG)
    assert store.check_database() == "11.2.0.4.0"
    assert store.ping()
    assert store.get_flights(["F1"]) == {}
    assert list(store.iter_flights()) == []
    assert store.pending_backfills(5) == []
    assert store.inbox_cursor() is None
    store.mark_backfilled([1, 2], NOW)
    store.record_backfill_failure([1], "AODB refused")
    assert store.inbox_gaps() == []
    assert store.gap_counters() == (0, 0)
    assert store.abandon_gaps(NOW, None) == []
    with store.transaction() as tx:
        tx.lock_pipeline(3)
        with tx.savepoint():
            assert tx.get_proc(1) is None
            assert tx.get_procs([1, 2]) == set()
        assert tx.find_duplicate("S|T|U|1", "ab", NOW) is None
        assert tx.find_duplicates([("S|T|U|1", "ab")]) == {}
        assert tx.load_flights(["F1"]) == {}
        assert tx.load_codeshares(["F1"]) == {}
        assert tx.version_floors(["F1"]) == {}
        claim = tx.claim_dead(9)
        assert claim == DeadClaim(9, "/MSG/FLOP/ESTT: not a time", 2, 41)
        tx.requeue_done(claim, Outcome.SUCCEEDED)
    outbox = OracleOutbox(pool)
    assert outbox.watermark() == 5
    assert outbox.fetch_undelivered(10) == []
    outbox.advance(6, NOW)
    outbox.mark_dispatched([6], NOW)
    assert outbox.purge_dispatched(NOW, 100) == 0
    assert outbox.backlog().count == 2
    outbox.park([ParkedEvent(7, "F1", "schd", 2, 9000, "too large", NOW)], NOW)
    assert outbox.parked(10) == []
    assert outbox.parked_count() == 0
    outbox.resolve_parked([("F1", 8)], NOW)
    lease = OracleLeaderLease(pool, instance="0123456789ab")
    assert lease.status() is None
    lease.try_acquire("pump", 30)
    lease.release("pump")
    assert flight_history(store, "F1") == []
    assert republish(store, CONFIG, now=NOW, flids=["F1"]) == 0


def _generic_binds(text: str) -> dict[str, object]:
    return dict.fromkeys(bind_names(text))


def execute_every_registered(recorder: Recorder) -> None:
    """Each registered statement not recorded yet, once, through ``_db`` (its input sizes)."""
    seen = set(recorder.texts())
    conn = recorder.connect()
    for statement in sql.REGISTRY.values():
        if statement.text in seen:
            continue
        seen.add(statement.text)
        binds = _generic_binds(statement.text)
        if statement.text.lstrip().upper().startswith(("SELECT", "WITH")):
            query(conn, statement, binds)  # type: ignore[arg-type]
        else:
            run_many(conn, statement, [binds])  # type: ignore[arg-type]


DRIVEN: set[str | None] = set()


@pytest.fixture(scope="module")
def recorded() -> Recorder:
    """migrate from an empty schema, the code paths, then the rest of the registry."""
    recorder = Recorder(answers=_answers())
    migrate_on(recorder.connect)
    drive_code_paths(recorder)
    DRIVEN.update(recorder.names())
    execute_every_registered(recorder)
    return recorder


def test_every_registered_statement_reached_the_driver(recorded: Recorder) -> None:
    assert {s.text for s in sql.REGISTRY.values()} <= set(recorded.texts())


def test_the_code_paths_reach_the_store_lease_outbox_and_operator_statements(
    recorded: Recorder,
) -> None:
    driven = DRIVEN
    assert recorded.calls
    assert {
        "session_setup",
        "lock_select",
        "proc_ids",
        "proc_duplicates",
        "watermark_advance",
        "parked_insert",
        "lease_acquire",
        "lease_release",
        "events_of_flight",
        "page_first",
        "health_probe",
        "flight_select",
        "dead_proc_delete",
        "requeue_audit",
        "requeue_audit_done",
    } <= driven
    assert len(driven) > 40


def test_every_recorded_text_passes_the_boundary(recorded: Recorder) -> None:
    assert boundary_problems(recorded.texts()) == []


def test_binds_and_input_sizes_match_the_text(recorded: Recorder) -> None:
    for call in recorded.calls:  # the stand-in refused any mismatch; this proves it looked
        named = bind_names(call.text)
        assert all({k.upper() for k in binds} == named for binds in call.binds)
        assert set(call.input_sizes) <= named


def test_sessions_carry_module_client_identifier_and_call_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    options = session.pool_options(session.parse_oracle_url("oracle://u:p@h:1521/S"))
    assert options["stmtcachesize"] == session.statement_cache_size() >= len(sql.REGISTRY)
    recorder = Recorder()
    conn = recorder.connect()
    options["session_callback"](conn, None)  # type: ignore[operator]
    assert (conn.module, conn.call_timeout) == ("flightstate", 45_000)
    assert conn.client_identifier
    assert recorder.texts() == [sql.SESSION_SETUP.text]


def test_the_client_requirement_is_stated_where_a_site_installs() -> None:
    root = Path(__file__).resolve().parents[2]
    readme = (root / "flightstate_oracle" / "README.md").read_text(encoding="utf-8")
    assert "Oracle Client 19" in readme
    assert "connects to Oracle Database 11.2" in readme
    lines = (root / "pyproject.toml").read_text(encoding="utf-8").splitlines()
    extra = next(i for i, line in enumerate(lines) if line.startswith("oracle = ["))
    comment = []
    for line in reversed(lines[:extra]):
        if not line.startswith("#"):
            break
        comment.append(line)
    assert "Instant Client 19" in " ".join(comment)

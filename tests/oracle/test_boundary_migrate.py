"""The real ``migrate`` path through the recording stand-in (tests/oracle/recording.py): from
an empty schema, bookkeeping included, all migrations -> all rollbacks -> all migrations; a
run stopped after each schema change in turn re-runs to completion; a schema yoyo migrated
under the old ids is adopted without running anything; a non-AL32UTF8 database is refused
before anything is created. Never ran on Oracle: the stand-in checks the boundary only (a
static check, as no Oracle 11g runs here); the real-server twin is
``test_migrate_grants_oracle.py``, run when ``FLIGHTSTATE_TEST_ORACLE_DSN`` is set."""

from __future__ import annotations

import pytest

from flightstate_core.domain.errors import ConfigError, FlightstateError
from flightstate_oracle import _sql as sql
from flightstate_oracle import session
from flightstate_oracle._steps import load_migrations
from flightstate_oracle.migrate import RENAMED, applied_on, migrate, migrate_on, rollback_on
from tests.oracle.boundary import boundary_problems, quoting_conflicts
from tests.oracle.recording import Recorder

IDS = [m.id for m in load_migrations()]


def _migrated() -> Recorder:
    recorder = Recorder()
    assert migrate_on(recorder.connect) == IDS
    return recorder


def test_empty_to_all_to_none_to_all() -> None:
    recorder = _migrated()
    full = recorder.schema.objects()
    assert "INBOX_GAP" in recorder.schema.tables
    assert "FLIGHT_SCHD_DISPLAY" in recorder.schema.views
    assert applied_on(recorder.connect) == IDS
    assert rollback_on(recorder.connect) == IDS[::-1]
    assert set(recorder.schema.tables) == {sql.BOOKKEEPING_TABLE}
    assert not (recorder.schema.indexes.keys() - {"SCHEMA_MIGRATION_PK"})
    assert not recorder.schema.sequences
    assert not recorder.schema.views
    assert applied_on(recorder.connect) == []
    assert migrate_on(recorder.connect) == IDS
    assert recorder.schema.objects() == full
    assert migrate_on(recorder.connect) == []  # nothing pending: nothing runs
    assert boundary_problems(recorder.texts()) == []


def test_the_url_path_names_every_session_and_holds_the_lock_apart(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    recorder = Recorder()
    monkeypatch.setattr(session, "init_thick_mode", lambda lib_dir=None: None)
    monkeypatch.setattr(session.oracledb, "connect", lambda **kw: recorder.connect())
    assert migrate("oracle://fs:secret@db:1521/AODB") == IDS
    assert {(c.module, c.client_identifier, c.call_timeout) for c in recorder.sessions} == {
        ("flightstate", session._default_client_identifier(), 0)
    }
    assert recorder.texts()[0] == sql.SESSION_SETUP.text


def test_no_yoyo_bookkeeping_reaches_the_driver() -> None:
    recorder = _migrated()
    texts = recorder.texts()
    assert not [t for t in texts if '"id"' in t or '"ctime"' in t or "_yoyo_version" in t]
    assert quoting_conflicts(
        [
            'CREATE TABLE "_yoyo_migration" (id VARCHAR(191))',
            'SELECT "id", "ctime" FROM "_yoyo_migration"',
        ]
    ) == {"id"}


def test_a_trailing_semicolon_is_refused_like_the_driver() -> None:
    recorder = Recorder()
    with pytest.raises(Exception, match="ORA-00911"):
        recorder.connect().cursor().execute("DROP SEQUENCE S;")
    assert boundary_problems(["DROP SEQUENCE S;"]) != []


def test_the_lock_is_held_on_another_session_than_the_ddl() -> None:
    recorder = _migrated()
    locks = [c for c in recorder.calls if c.text == sql.MIGRATION_LOCK.text]
    ddl = [c for c in recorder.calls if c.text.startswith("CREATE TABLE FLIGHT_SCHD ")]
    assert len(locks) == 1
    assert len(ddl) == 1
    assert locks[0].session != ddl[0].session  # DDL commits would release a lock it held


def _changes_of_a_full_run() -> int:
    return _migrated().changes


@pytest.mark.parametrize("direction", ["migrate", "rollback"])
def test_stopped_after_each_change_reruns_to_completion(direction: str) -> None:
    reference = _migrated()
    goal = reference.schema.objects()
    if direction == "rollback":
        rollback_on(reference.connect)
        goal = reference.schema.objects()
        before = _migrated()
        total = _rollback_changes(before)
    else:
        total = _changes_of_a_full_run()
    assert total > 60
    for stop in range(total):
        recorder = _migrated() if direction == "rollback" else Recorder()
        recorder.fail_after, recorder.changes = stop, 0
        run = migrate_on if direction == "migrate" else rollback_on
        with pytest.raises(FlightstateError, match="ORA-03113"):
            run(recorder.connect)
        recorder.fail_after = None
        run(recorder.connect)
        assert recorder.schema.objects() == goal, f"{direction} stopped after change {stop}"
        expected = IDS if direction == "migrate" else []
        assert applied_on(recorder.connect) == expected


def _rollback_changes(recorder: Recorder) -> int:
    recorder.changes = 0
    rollback_on(recorder.connect)
    return recorder.changes


def test_a_schema_yoyo_migrated_under_the_old_ids_runs_nothing_again() -> None:
    """Everything yoyo applied is adopted, not re-run; only 0005 (added after the rename,
    so never applied by yoyo) runs."""
    done = _migrated().schema
    recorder = Recorder()

    def shipped(name: str, table: str | None = None) -> bool:
        return not {name, table} & {"SCHEMA_MIGRATION"} and not (
            name.startswith("RUNNER_") or (table or "").startswith("RUNNER_")
        )

    recorder.schema.tables = {t: set(c) for t, c in done.tables.items() if shipped(t)}
    recorder.schema.indexes = {i: t for i, t in done.indexes.items() if shipped(i, t)}
    recorder.schema.sequences = {q for q in done.sequences if shipped(q)}
    recorder.schema.views = set(done.views)
    recorder.schema.constraints = {c: t for c, t in done.constraints.items() if shipped(c, t)}
    recorder.schema.tables["_yoyo_migration"] = {"migration_hash", "migration_id"}
    recorder.schema.yoyo_ids = list(RENAMED)
    assert migrate_on(recorder.connect) == ["0005_runner_tables"]
    created = [t for t in recorder.texts() if t.startswith(("CREATE", "ALTER", "DROP"))]
    assert created[0] == sql.BOOKKEEPING_CREATE.text
    assert all("RUNNER_" in text for text in created[1:])
    assert len(created) == 5  # the bookkeeping table, then 0005's four objects
    assert applied_on(recorder.connect) == IDS


def test_a_database_not_in_al32utf8_is_refused_before_anything_is_created() -> None:
    recorder = Recorder(charset="ZHS16GBK")
    with pytest.raises(ConfigError) as caught:
        migrate_on(recorder.connect)
    assert "ZHS16GBK" in str(caught.value)
    assert "AL32UTF8" in str(caught.value)
    assert "\n" not in str(caught.value)
    assert not [t for t in recorder.texts() if t.startswith(("CREATE", "ALTER", "INSERT"))]


def test_an_unknown_target_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="9999_nothing"):
        migrate_on(Recorder().connect, "9999_nothing")
    recorder = Recorder()
    assert migrate_on(recorder.connect, "0002_history_display") == IDS[:2]
    assert rollback_on(recorder.connect, "0001_core") == ["0002_history_display"]


def test_left_overs_of_a_failed_yoyo_run_are_ignored() -> None:
    recorder = Recorder()
    recorder.schema.tables["_yoyo_migration"] = {"ID", "CTIME"}  # yoyo's v1 shape
    recorder.schema.tables["_yoyo_version"] = {"version", "installed_at_utc"}
    assert migrate_on(recorder.connect) == IDS
    assert sql.YOYO_RECORDS.text not in recorder.texts()

"""Grants as data (``flightstate_oracle.grants``): derived from what the backend sends, the
same from the recorded run as from the registry and migration files, written in the README,
and checked by the preflight (through the recording stand-in: a static check, as no Oracle
11g runs here; the real-server twin is ``test_migrate_grants_oracle.py``, run when
``FLIGHTSTATE_TEST_ORACLE_DSN`` is set)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import flightstate_oracle
from flightstate_oracle import session
from flightstate_oracle.grants import (
    Grant,
    backend_statements,
    missing_grants,
    preflight,
    preflight_url,
    render_grants,
    required_grants,
)
from flightstate_oracle.migrate import migrate_on
from tests.oracle.recording import Recorder
from tests.oracle.test_boundary_statements import (
    _answers,
    drive_code_paths,
    execute_every_registered,
)

README = Path(flightstate_oracle.__file__).with_name("README.md")
BLOCK = re.compile(r"<!-- grants:begin -->\n```sql\n(.*?)\n```\n<!-- grants:end -->", re.S)
ALL_SYSTEM = ["ALTER SYSTEM", "CREATE SEQUENCE", "CREATE SESSION", "CREATE TABLE", "CREATE VIEW"]


def test_the_readme_lists_exactly_the_generated_grants() -> None:
    found = BLOCK.search(README.read_text(encoding="utf-8"))
    assert found is not None, "README section 'Grants' lost its generated block"
    assert found.group(1) == render_grants()


def test_the_recorded_run_needs_exactly_the_derived_grants() -> None:
    recorder = Recorder(answers=_answers())
    migrate_on(recorder.connect)
    drive_code_paths(recorder)
    execute_every_registered(recorder)
    assert required_grants(recorder.texts()) == required_grants(backend_statements())


def test_the_view_the_migrations_create_needs_its_grant() -> None:
    assert [str(g) for g in required_grants(backend_statements())] == [
        *ALL_SYSTEM,
        "SELECT ON SYS.V_$SESSION",
    ]


@pytest.mark.parametrize(
    ("text", "grant"),
    [
        ("CREATE OR REPLACE TRIGGER T_BI BEFORE INSERT ON T FOR EACH ROW", Grant("CREATE TRIGGER")),
        ("CREATE PROCEDURE P AS BEGIN NULL", Grant("CREATE PROCEDURE")),
        ("CREATE TYPE ID_LIST AS TABLE OF NUMBER", Grant("CREATE TYPE")),
        ("ALTER SESSION SET SQL_TRACE = TRUE", Grant("ALTER SESSION")),
        ("SELECT BLOCKING_SESSION FROM V$SESSION", Grant("SELECT", "V_$SESSION")),
        ("SELECT SESSION_ID FROM V$LOCKED_OBJECT", Grant("SELECT", "V_$LOCKED_OBJECT")),
    ],
)
def test_each_statement_kind_maps_to_its_privilege(text: str, grant: Grant) -> None:
    assert grant in required_grants([text])


def test_session_settings_and_own_indexes_need_no_privilege() -> None:
    texts = ["ALTER SESSION SET TIME_ZONE = '+00:00'", "CREATE INDEX X_IX ON T (A)"]
    assert required_grants(texts) == (Grant("CREATE SESSION"),)


def _granted(system: list[str], objects: list[tuple[str, str]], quota: int,
             charset: str = "AL32UTF8") -> Recorder:  # fmt: skip
    answers: dict[str, Any] = {
        "granted_system_privileges": lambda b: (["PRIVILEGE"], [(p,) for p in system]),
        "granted_object_privileges": lambda b: (["TABLE_NAME", "PRIVILEGE"], objects),
        "tablespace_quota": lambda b: (["N"], [(quota,)]),
    }
    return Recorder(answers=answers, charset=charset)


def test_a_schema_with_every_grant_passes_the_preflight() -> None:
    recorder = _granted(ALL_SYSTEM, [("V_$SESSION", "SELECT")], 1)
    assert preflight(recorder.connect()) == []  # type: ignore[arg-type]


def test_the_preflight_names_each_missing_grant_and_the_charset() -> None:
    recorder = _granted(["CREATE SESSION", "CREATE TABLE"], [], 0, charset="ZHS16GBK")
    problems = preflight(recorder.connect())  # type: ignore[arg-type]
    assert problems[0].startswith("Oracle database character set (NLS_CHARACTERSET) is ZHS16GBK")
    assert problems[1:] == [
        "missing grant: ALTER SYSTEM", "missing grant: CREATE SEQUENCE",
        "missing grant: CREATE VIEW", "missing grant: SELECT ON SYS.V_$SESSION",
        "missing grant: QUOTA on the default tablespace",
    ]  # fmt: skip


def test_any_dictionary_and_unlimited_tablespace_cover_their_items() -> None:
    recorder = _granted([*ALL_SYSTEM, "SELECT ANY DICTIONARY", "UNLIMITED TABLESPACE"], [], 0)
    assert missing_grants(recorder.connect()) == []  # type: ignore[arg-type]


def test_the_preflight_by_url_runs_on_one_prepared_session(monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = _granted(ALL_SYSTEM, [("V_$SESSION", "SELECT")], 1)
    monkeypatch.setattr(session, "init_thick_mode", lambda lib_dir=None: None)
    monkeypatch.setattr(session.oracledb, "connect", lambda **kw: recorder.connect())
    assert preflight_url("oracle://fs:secret@db:1521/AODB") == []
    assert [c.module for c in recorder.sessions] == ["flightstate"]
    assert recorder.sessions[0].closed

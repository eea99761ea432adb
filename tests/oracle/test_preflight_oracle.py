"""The Oracle store's deployment checks through the recording stand-in (no server here):
a migrated schema with every grant passes; a schema behind, missing grants, another
character set, a distant clock and an unreachable server each fail with their fix."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import oracledb

from flightstate_core.domain.errors import TransientError
from flightstate_core.support.preflight import Check, all_passed
from flightstate_oracle.migrate import migrate_on
from flightstate_oracle.preflight import store_checks
from tests.oracle.recording import Recorder
from tests.oracle.test_grants import ALL_SYSTEM

NOW = datetime(2026, 12, 5, 8, 0, tzinfo=UTC)


def _recorder(system: list[str], *, charset: str = "AL32UTF8",
              server_now: datetime = NOW) -> Recorder:  # fmt: skip
    answers: dict[str, Any] = {
        "granted_system_privileges": lambda b: (["PRIVILEGE"], [(p,) for p in system]),
        "granted_object_privileges": lambda b: (["TABLE_NAME", "PRIVILEGE"],
                                                [("V_$SESSION", "SELECT")]),
        "tablespace_quota": lambda b: (["N"], [(1,)]),
        "server_clock_utc": lambda b: (["NOW_UTC"], [(server_now.replace(tzinfo=None),)]),
    }  # fmt: skip
    return Recorder(answers=answers, charset=charset)


def _named(checks: list[Check]) -> dict[str, Check]:
    return {check.name: check for check in checks}


def test_a_migrated_schema_with_every_grant_passes() -> None:
    recorder = _recorder(ALL_SYSTEM)
    migrate_on(recorder.connect)
    checks = store_checks(recorder.connect, "db:1521/AODB", host_clock=lambda: NOW)  # type: ignore[arg-type]
    assert all_passed(checks), [c.line() for c in checks]
    assert [c.name for c in checks] == [
        "store reachable", "store character set", "store grants", "store server clock",
        "store schema",
    ]  # fmt: skip


def test_each_problem_is_named_with_its_fix() -> None:
    recorder = _recorder(["CREATE SESSION", "CREATE TABLE"], charset="ZHS16GBK",
                         server_now=NOW + timedelta(seconds=9))  # fmt: skip
    checks = _named(store_checks(recorder.connect, "db:1521/AODB", host_clock=lambda: NOW))  # type: ignore[arg-type]
    assert "ZHS16GBK" in checks["store character set"].found
    assert not checks["store character set"].ok
    grants = checks["store grants"]
    assert grants.found == "missing ALTER SYSTEM, CREATE SEQUENCE, CREATE VIEW"
    assert "README" in grants.fix
    assert checks["store server clock"].found.startswith("+9.")
    assert (checks["store schema"].ok, checks["store schema"].found) == (
        False, "no flightstate schema",
    )  # fmt: skip


def test_an_unreachable_server_is_one_failed_check() -> None:
    def refuse() -> oracledb.Connection:
        raise TransientError("DPY-6005: cannot connect to database", store_wide=True)

    checks = store_checks(refuse, "db:1521/AODB")
    assert len(checks) == 1
    assert checks[0].line().startswith("\u2718 store reachable: db:1521/AODB: DPY-6005")

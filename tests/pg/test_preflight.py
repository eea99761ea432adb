"""The store's deployment checks on a real PostgreSQL: a migrated store passes; a schema
behind or missing, limits a DSN overrides and a distant clock each fail with their fix;
the leader is named; an unreachable server is one line."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from flightstate_core.support.preflight import Check, all_passed, schema_check
from flightstate_pg import migrate
from flightstate_pg.lease import PgLeaderLease
from flightstate_pg.preflight import store_checks
from flightstate_pg.session import SessionLimits

pytestmark = pytest.mark.pg


def _named(checks: list[Check]) -> dict[str, Check]:
    return {check.name: check for check in checks}


def test_a_migrated_store_passes_every_check(pg_db: str) -> None:
    migrate(pg_db)
    checks = store_checks(pg_db, SessionLimits())
    assert all_passed(checks), [c.line() for c in checks]
    assert [c.name for c in checks] == [
        "store reachable", "store session limits", "store server clock", "store schema", "leader",
    ]  # fmt: skip
    assert _named(checks)["leader"].found == "none yet"


def test_a_schema_behind_or_missing_says_run_migrate(pg_db: str) -> None:
    missing = _named(store_checks(pg_db))["store schema"]
    assert (missing.ok, missing.found) == (False, "no flightstate schema")
    migrate(pg_db, "0005_runner_tables")
    behind = _named(store_checks(pg_db))["store schema"]
    assert not behind.ok
    assert behind.found == "behind: 0006_write_path not applied"
    assert behind.fix == "run `flightstate migrate`"


def test_a_schema_from_a_newer_flightstate_is_named() -> None:
    verdict = schema_check(["0001_a", "0002_b", "0003_c"], ["0001_a", "0002_b"])
    assert not verdict.ok
    assert verdict.found == "migrated by a newer flightstate (0003_c)"
    assert schema_check(["0001_a"], ["0001_a"]).ok


def test_limits_overridden_by_the_dsn_are_named(pg_db: str) -> None:
    migrate(pg_db)
    overridden = pg_db + ("&" if "?" in pg_db else "?") + "options=-c%20statement_timeout%3D0"
    limits = _named(store_checks(overridden, SessionLimits()))["store session limits"]
    assert not limits.ok
    assert "statement_timeout=0 ms" in limits.found
    assert limits.fix.startswith("statement_timeout differ")


def test_a_clock_far_from_the_hosts_fails(pg_db: str) -> None:
    def fast_host() -> datetime:
        return datetime.now(UTC) + timedelta(seconds=10)

    clock = _named(store_checks(pg_db, host_clock=fast_host))["store server clock"]
    assert not clock.ok
    assert clock.found.startswith("-10.")


def test_the_leader_is_named(pg_db: str) -> None:
    migrate(pg_db)
    lease = PgLeaderLease(pg_db)
    try:
        epoch = lease.try_acquire("airport-a", 30)
        assert epoch is not None
        leader = _named(store_checks(pg_db))["leader"]
    finally:
        lease.close()
    assert leader.ok
    assert leader.found.startswith("airport-a")
    assert leader.found.endswith(f"holds the lease (epoch {epoch})")


def test_an_unreachable_server_is_one_failed_check() -> None:
    checks = store_checks("postgresql://flightstate:s3cret@127.0.0.1:1/store", connect_timeout=2)
    assert len(checks) == 1
    assert checks[0].name == "store reachable"
    assert not checks[0].ok
    assert "s3cret" not in checks[0].line()

"""The inbox's deployment checks on a real MariaDB: a healthy inbox passes every one; a
missing table or column, a missing grant and a zone that is not the server's each fail
with their fix; an unreachable server is one line."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pymysql
import pytest

from flightstate_core.support.preflight import Check, all_passed
from flightstate_mysql import create_cminmsgs, parse_mysql_dsn
from flightstate_mysql.preflight import WRITTEN_COLUMNS, inbox_checks
from tests.fixtures.site import limited_user, mysql_execute, server_zone
from tests.fixtures.util import unique_name

pytestmark = pytest.mark.mysql


def _other_zone(zone: str) -> str:
    return "Asia/Shanghai" if zone != "Etc/GMT-8" else "UTC"


@pytest.fixture
def inbox_table(mysql_dsn: str) -> Iterator[str]:
    table = unique_name("cminmsgs")
    with pymysql.connect(**parse_mysql_dsn(mysql_dsn)) as conn:
        create_cminmsgs(conn, table)
    yield table
    mysql_execute(mysql_dsn, f"DROP TABLE IF EXISTS `{table}`")


def _by_name(checks: list[Check]) -> dict[str, Check]:
    return {check.name.split(" on ")[0].split(" of ")[0]: check for check in checks}


def test_a_healthy_inbox_passes_every_check(mysql_dsn: str, inbox_table: str) -> None:
    zone = server_zone(mysql_dsn)
    checks = inbox_checks(mysql_dsn, inbox_table, airport_tz=zone)
    assert all_passed(checks), [c.line() for c in checks]
    names = [c.name for c in checks]
    assert names[:2] == ["inbox reachable", f"inbox table {inbox_table}"]
    assert names[2].startswith("grants of ")
    assert names[3:] == ["inbox server clock", "inbox time zone"]
    assert all(c.line().startswith("\u2714 ") for c in checks)


def test_a_missing_table_and_a_missing_column_are_named(mysql_dsn: str, inbox_table: str) -> None:
    zone = server_zone(mysql_dsn)
    missing = inbox_checks(mysql_dsn, "no_such_inbox", airport_tz=zone)
    table = _by_name(missing)["inbox table no_such_inbox"]
    assert not table.ok
    assert "FLIGHTSTATE_INBOX_TABLE" in table.fix
    mysql_execute(mysql_dsn, f"ALTER TABLE `{inbox_table}` DROP COLUMN CMINMSGS_SUBSYSTEM_SUBTYPE")
    checks = inbox_checks(mysql_dsn, inbox_table, airport_tz=zone)
    column = _by_name(checks)[f"inbox table {inbox_table}"]
    assert not column.ok
    assert column.found == "missing or not visible to this account: CMINMSGS_SUBSYSTEM_SUBTYPE"
    assert not all_passed(checks)


def test_a_missing_grant_is_named_with_the_grant_to_run(mysql_dsn: str, inbox_table: str) -> None:
    with limited_user(mysql_dsn, inbox_table) as dsn:
        checks = inbox_checks(dsn, inbox_table, airport_tz=server_zone(mysql_dsn))
    grants = next(c for c in checks if c.name.startswith("grants of "))
    assert not grants.ok
    assert grants.found == "missing " + ", ".join(f"UPDATE ({c})" for c in WRITTEN_COLUMNS)
    assert grants.fix.startswith("GRANT SELECT (")
    user = dsn.split("://")[1].split(":")[0]
    assert f"TO '{user}'@'%'" in grants.fix
    password = dsn.split(":")[2].split("@")[0]
    assert password not in " ".join(c.line() for c in checks)


def test_a_zone_that_is_not_the_servers_fails(mysql_dsn: str, inbox_table: str) -> None:
    zone = server_zone(mysql_dsn)
    other = _other_zone(zone)
    by_airport = _by_name(inbox_checks(mysql_dsn, inbox_table, airport_tz=other))
    assert not by_airport["inbox time zone"].ok
    assert f"FLIGHTSTATE_AIRPORT_TZ={other}" in by_airport["inbox time zone"].found
    assert "FLIGHTSTATE_INBOX_TZ" in by_airport["inbox time zone"].fix
    # The inbox's own zone setting, when given, is what must match the server's clock.
    matched = inbox_checks(mysql_dsn, inbox_table, airport_tz=other, inbox_tz=zone)
    assert all_passed(matched), [c.line() for c in matched]
    wrong = _by_name(inbox_checks(mysql_dsn, inbox_table, airport_tz=zone, inbox_tz=other))
    assert not wrong["inbox time zone"].ok


def test_a_clock_far_from_the_hosts_fails(mysql_dsn: str, inbox_table: str) -> None:
    def slow_host() -> datetime:
        return datetime.now(UTC) - timedelta(seconds=30)

    checks = inbox_checks(mysql_dsn, inbox_table, airport_tz=server_zone(mysql_dsn),
                          host_clock=slow_host)  # fmt: skip
    clock = _by_name(checks)["inbox server clock"]
    assert not clock.ok
    assert clock.found.startswith("+30.")
    assert "NTP" in clock.fix


def test_an_unreachable_server_is_one_failed_check() -> None:
    checks = inbox_checks("mysql://flightstate:s3cret@127.0.0.1:1/aodb", "cminmsgs",
                          airport_tz="UTC", connect_timeout=2)  # fmt: skip
    assert len(checks) == 1
    assert not checks[0].ok
    assert checks[0].name == "inbox reachable"
    assert "s3cret" not in checks[0].line()
    assert "\n" not in checks[0].line()

"""An operator cannot hurt production by leaving a setting out or by trying things: each
command as an operator runs it (a subprocess) on real PostgreSQL and MariaDB.

- the inbox kind is a setting of its own, never inferred from a missing MySQL DSN;
- ``generate`` writes only into an inbox table that ``inbox-init`` made (or ``--force``);
- ``status`` shows everything it can read and names an inbox it cannot, in words.
"""

from __future__ import annotations

import re
import subprocess

import psycopg
import pytest

from flightstate_mysql.dsn import parse_mysql_dsn
from flightstate_mysql.schema import CMINMSGS_DDL
from tests.fixtures.site import mysql_execute
from tests.fixtures.util import unique_name
from tests.runner._cli import run_cli


def _aodb_table(table: str) -> str:
    """The AODB's own table as its interface makes it: the lab inbox's shape, no mark."""
    return CMINMSGS_DDL.format(table=table, comment="")


def _one_line(result: subprocess.CompletedProcess[str], code: int) -> str:
    assert result.returncode == code, result.stderr[-3000:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    return lines[0]


def _pg_table_exists(dsn: str, table: str) -> bool:
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table,)).fetchone()
    return bool(row and row[0])


@pytest.mark.pg
@pytest.mark.parametrize("command", ["run --until-idle", "generate --messages 5", "inbox-init",
                                     "requeue 1"])  # fmt: skip
def test_no_inbox_setting_stops_the_command_and_creates_nothing(pg_db: str, command: str) -> None:
    """Only a store DSN: every command that reads or writes the inbox refuses with one line
    naming both ways out; nothing is created in the store (the old silent fallback made a
    lab inbox there)."""
    assert run_cli("migrate", env={"FLIGHTSTATE_STORE_DSN": pg_db}).returncode == 0
    table = unique_name("cmin")
    env = {"FLIGHTSTATE_STORE_DSN": pg_db, "FLIGHTSTATE_INBOX_TABLE": table}
    line = _one_line(run_cli(*command.split(), env=env), 2)
    assert line.startswith("configuration error: mysql_dsn: ")
    assert "FLIGHTSTATE_MYSQL_DSN" in line
    assert "FLIGHTSTATE_INBOX=store" in line
    assert not _pg_table_exists(pg_db, table)


@pytest.mark.pg
@pytest.mark.mysql
def test_a_store_inbox_with_a_mysql_dsn_is_refused(pg_db: str, mysql_dsn: str) -> None:
    env = {"FLIGHTSTATE_STORE_DSN": pg_db, "FLIGHTSTATE_MYSQL_DSN": mysql_dsn,
           "FLIGHTSTATE_INBOX": "store"}  # fmt: skip
    line = _one_line(run_cli("inbox-init", env=env), 2)
    assert line.startswith("configuration error: inbox: store, but mysql_dsn is set too")
    typo = {**env, "FLIGHTSTATE_INBOX": "x"}
    line = _one_line(run_cli("--inbox", "mysql", "inbox-init", env=typo), 2)
    assert "inbox: 'x' is not mysql or store" in line  # the environment is read first


@pytest.mark.pg
@pytest.mark.mysql
def test_generate_writes_only_into_a_lab_inbox(pg_db: str, mysql_dsn: str) -> None:
    """A table the AODB made (no mark) is refused, left empty, and named; ``--force``
    writes; ``inbox-init`` says it leaves such a table as it is; a table ``generate`` or
    ``inbox-init`` made takes traffic again and again."""
    aodb, lab = unique_name("aodb"), unique_name("lab")
    mysql_execute(mysql_dsn, _aodb_table(aodb))
    env = {"FLIGHTSTATE_STORE_DSN": pg_db, "FLIGHTSTATE_MYSQL_DSN": mysql_dsn,
           "FLIGHTSTATE_INBOX_TABLE": aodb}  # fmt: skip

    line = _one_line(run_cli("generate", "--messages", "5", env=env), 2)
    assert line.startswith(f"configuration error: inbox_table: {aodb} at mysql://")
    assert "not made by `flightstate inbox-init`" in line
    assert "--force" in line
    assert mysql_execute(mysql_dsn, f"SELECT count(*) FROM `{aodb}`") == [(0,)]

    init = run_cli("inbox-init", env=env)
    assert init.returncode == 0, init.stderr
    assert "exists and was not made by inbox-init (left as it is" in init.stdout
    forced = run_cli("generate", "--messages", "5", "--force", env=env)
    assert forced.returncode == 0, forced.stderr
    assert mysql_execute(mysql_dsn, f"SELECT count(*) FROM `{aodb}`")[0][0] >= 5

    lab_env = {**env, "FLIGHTSTATE_INBOX_TABLE": lab}
    for _ in range(2):  # made by the first generate, then recognised
        done = run_cli("generate", "--messages", "5", env=lab_env)
        assert done.returncode == 0, done.stderr
    assert mysql_execute(mysql_dsn, f"SELECT count(*) FROM `{lab}`")[0][0] >= 10
    assert "and coutmsgs ready (a lab inbox)" in run_cli("inbox-init", env=lab_env).stdout


@pytest.mark.pg
@pytest.mark.mysql
def test_status_names_an_inbox_it_cannot_read_and_shows_the_rest(
    pg_db: str, mysql_dsn: str
) -> None:
    """A refused MySQL login: the inbox line says so in words (no driver tuple, no
    password), every other line is there, exit 1 for a script."""
    assert run_cli("migrate", env={"FLIGHTSTATE_STORE_DSN": pg_db}).returncode == 0
    params = parse_mysql_dsn(mysql_dsn)
    wrong = (f"mysql://fs_no_such_user:s3cr3t-pw@{params['host']}:{params['port']}/"
             f"{params['database']}")  # fmt: skip
    result = run_cli("status", env={"FLIGHTSTATE_STORE_DSN": pg_db,
                                    "FLIGHTSTATE_MYSQL_DSN": wrong})  # fmt: skip
    assert result.returncode == 1, result.stderr
    (inbox,) = [line for line in result.stdout.splitlines() if line.startswith("inbox:")]
    # MySQL says 1045 for a wrong password, MariaDB 1698 for an unknown user
    assert re.match(r"inbox:    mysql cminmsgs, cursor none \(nothing processed yet\), lag "
                    r"unknown: connecting to the MySQL inbox: MySQL error (1045|1698): Access "
                    r"denied for user 'fs_no_such_user'", inbox), inbox
    assert "(1045," not in result.stdout
    assert "s3cr3t-pw" not in result.stdout + result.stderr
    assert any(line.startswith("outcomes: ") for line in result.stdout.splitlines())
    assert any(line.startswith("leader:   ") for line in result.stdout.splitlines())


@pytest.mark.pg
def test_check_names_a_lab_inbox_as_not_a_site_inbox(pg_db: str) -> None:
    env = {"FLIGHTSTATE_STORE_DSN": pg_db, "FLIGHTSTATE_INBOX": "store"}
    assert run_cli("migrate", env=env).returncode == 0
    result = run_cli("check", env=env)
    assert result.returncode == 1, result.stdout + result.stderr
    (inbox,) = [line for line in result.stdout.splitlines() if " inbox: " in line]
    assert inbox == ("\u2718 inbox: a lab inbox in the store (FLIGHTSTATE_INBOX=store) \u2014 a "
                     "site reads the AODB's table: unset FLIGHTSTATE_INBOX and set "
                     "FLIGHTSTATE_MYSQL_DSN")  # fmt: skip

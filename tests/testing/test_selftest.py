"""Site acceptance (``flightstate_testing.selftest``) on a real PostgreSQL database: every
contract suite passes in throwaway schemas, each item is reported, and the database is
left as it was; a broken store fails its items; a server that is not there is one line."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import psycopg
import pytest

from flightstate_core.domain.errors import ConfigError, TransientError
from flightstate_testing.selftest import run_suites
from flightstate_testing.selftest.pg_suites import __all__ as PG_SUITES

pytestmark = pytest.mark.pg

_SCHEMAS = "SELECT nspname FROM pg_namespace ORDER BY nspname"
_RUN = """
import sys
from flightstate_testing.selftest import run_suites
report = run_suites(sys.argv[1], echo=lambda line: print(line, flush=True))
print("passed" if report.passed else "failed", len(report.items), len(report.leftovers))
"""


def _schemas(dsn: str) -> list[Any]:
    with psycopg.connect(dsn) as conn:
        return conn.execute(_SCHEMAS).fetchall()


def test_every_suite_passes_and_nothing_is_left_behind(pg_db: str) -> None:
    before = _schemas(pg_db)
    # Its own process: the suites run in a pytest session of their own, as at a site.
    done = subprocess.run([sys.executable, "-c", _RUN, pg_db], capture_output=True, text=True,
                          timeout=600, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    verdict, count, leftovers = lines[-1].split()
    assert (verdict, leftovers) == ("passed", "0"), "\n".join(lines[-20:])
    items = lines[:-1]
    assert len(items) == int(count) > 50
    assert all(line.startswith("\u2714 ") and line.endswith(" s)") for line in items), items
    suites = {line.split()[1] for line in items}
    assert suites == set(PG_SUITES)
    assert _schemas(pg_db) == before


def test_a_store_without_its_schema_fails_its_items(pg_db: str) -> None:
    """The suites migrate each schema themselves; a selection that cannot migrate (a
    read-only session) fails, and says why."""
    read_only = pg_db + ("&" if "?" in pg_db else "?") + (
        "options=-c%20default_transaction_read_only%3Don"
    )
    lines: list[str] = []
    report = run_suites(read_only, echo=lines.append, select="TestPgHealthContract")
    assert not report.passed
    assert lines
    assert all(line.startswith("\u2718 TestPgHealthContract ") for line in lines)
    assert "read-only" in lines[0]


def test_an_absent_server_is_one_line() -> None:
    with pytest.raises(TransientError) as raised:
        run_suites("postgresql://site:s3cret@127.0.0.1:1/store", echo=lambda _line: None)
    message = str(raised.value)
    assert message.startswith("store not reachable at 127.0.0.1:1/store: ")
    assert "s3cret" not in message
    assert "\n" not in message


def test_a_store_without_suites_here_is_a_configuration_error() -> None:
    with pytest.raises(ConfigError, match=r"no contract suites for a mysql:// store"):
        run_suites("mysql://root@127.0.0.1/x", echo=lambda _line: None)

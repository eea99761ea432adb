"""DSN parsing and redaction agree (docs/design.md, "Poison-proof bounds"; docs/design.md,
"Operator view").

A password is hidden by ``redact`` exactly where the parsers split it off (the last ``@``),
or the DSN is refused with a message that does not quote it. Every hostile password below
carries the marker ``LeakTail9``: no output of any command may contain it.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from typing import TypeVar
from urllib.parse import quote

import pytest

from flightstate_core.support.dsn import check_url_credentials, redact
from flightstate_mysql.dsn import parse_mysql_dsn
from tests.runner._cli import REPO, clean_env, run_cli, runner_argv

T = TypeVar("T")
MARK = "LeakTail9"

HOSTILE = (
    f"Pw@{MARK}",
    f"{MARK}@",
    f"a@b@{MARK}",
    f"p/{MARK}",
    f"p?{MARK}",
    f"p#{MARK}",
    f"p:{MARK}",
    f"p {MARK}",
    f"p'{MARK}",
    f'p"{MARK}',
    f"p%zz{MARK}",
    f"p%40{MARK}",
    f"p\\{MARK}",
    f"p={MARK}&x=1",
    f"p@127.0.0.1:1/db?{MARK}",
    f"航班{MARK}",
)


def _outcome(call: Callable[[], T]) -> tuple[T | None, str | None]:
    """(the result, None), or (None, the ValueError's text)."""
    try:
        return call(), None
    except ValueError as exc:
        return None, str(exc)


def _url(scheme: str, password: str) -> str:
    return f"{scheme}://adv:{password}@127.0.0.1:1/db"


@pytest.mark.parametrize("password", HOSTILE)
def test_mysql_parse_and_redact_agree(password: str) -> None:
    dsn = _url("mysql", password)
    assert MARK not in (redact(dsn) or "")
    assert MARK not in (redact(f"error: cannot use {dsn}: refused") or "")
    kwargs, refusal = _outcome(lambda: parse_mysql_dsn(dsn))
    if refusal is not None:
        assert MARK not in refusal
        return
    assert kwargs is not None
    # accepted: the parser split at the last @, where redact hid it
    assert kwargs["host"] == "127.0.0.1"
    assert kwargs["user"] == "adv"
    assert MARK in kwargs["password"]
    assert redact(dsn) == "mysql://adv:***@127.0.0.1:1/db"


@pytest.mark.parametrize("password", HOSTILE)
def test_percent_encoded_passwords_are_parsed_exactly(password: str) -> None:
    dsn = _url("mysql", quote(password, safe=""))
    assert parse_mysql_dsn(dsn)["password"] == password
    assert redact(dsn) == "mysql://adv:***@127.0.0.1:1/db"


@pytest.mark.parametrize("password", HOSTILE)
def test_pg_urls_split_where_redact_splits_or_are_refused(password: str) -> None:
    dsn = _url("postgresql", password)
    assert MARK not in (redact(dsn) or "")
    _, refusal = _outcome(lambda: check_url_credentials(dsn, raw_at=False))
    if refusal is not None:
        assert MARK not in refusal
        return
    assert "@" not in password  # libpq splits at the first @: a raw one is refused


@pytest.mark.parametrize(
    "conninfo",
    [
        f"host=h password={MARK} user=u",
        f"host=h password='a b {MARK}' user=u",
        f"host=h password = '{MARK}\\' x' user=u",
        f"host=h PASSWORD={MARK}",
    ],
)
def test_key_value_passwords_are_hidden(conninfo: str) -> None:
    shown = redact(conninfo) or ""
    assert MARK not in shown
    assert shown.startswith("host=h password") or shown.startswith("host=h PASSWORD")


def test_redact_leaves_dsns_without_password_alone() -> None:
    assert (
        redact("postgresql://flight@127.0.0.1:5432/db") == "postgresql://flight@127.0.0.1:5432/db"
    )
    assert redact("mysql://127.0.0.1/db") == "mysql://127.0.0.1/db"
    assert redact("127.0.0.1:9092") == "127.0.0.1:9092"
    assert redact(None) is None


#: A few passwords of each shape, over every command that prints a DSN or an error.
CLI_PASSWORDS = (f"Pw@{MARK}", f"p/{MARK}", f"p {MARK}", f"p#{MARK}", f"p%40{MARK}")
CLI_COMMANDS = (
    ("status",), ("status", "--json"), ("migrate",), ("inbox-init",),
    ("generate", "--messages", "1"),
)  # fmt: skip


def _run_until_it_waits(env: dict[str, str]) -> tuple[int, str]:
    """``run --until-idle`` on an unreachable store: it waits (a warning per attempt); after
    the second warning it is stopped as systemd stops it (SIGTERM). Its exit code and
    everything it printed."""
    proc = subprocess.Popen(runner_argv("run", "--until-idle"), env=clean_env(env), cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stderr is not None
    seen = ""
    try:
        deadline = time.monotonic() + 60
        while seen.count("store not reachable, retrying") < 2 and proc.poll() is None:
            seen += proc.stderr.readline()
            assert time.monotonic() < deadline, seen[-3000:]
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, out + seen + err


@pytest.mark.parametrize("password", CLI_PASSWORDS)
@pytest.mark.parametrize("which", ["pg", "mysql"])
def test_no_command_prints_a_password(password: str, which: str) -> None:
    """Nothing listens on port 1: each command fails (exit 1) or refuses the DSN (exit 2,
    naming the setting); neither prints the password nor a traceback."""
    pg = _url("postgresql", password if which == "pg" else "plain")
    mysql = _url("mysql", password if which == "mysql" else "plain")
    env = {"FLIGHTSTATE_PG_DSN": pg + "?connect_timeout=2", "FLIGHTSTATE_MYSQL_DSN": mysql}
    for args in CLI_COMMANDS:
        result = run_cli(*args, env=env, timeout=120)
        output = result.stdout + result.stderr
        assert MARK not in output, (args, output)
        assert "Traceback" not in output, (args, output)
        assert result.returncode in {1, 2}, (args, output)
        if result.returncode == 2:
            assert f"{which}_dsn: " in result.stderr, (args, output)
    code, output = _run_until_it_waits(env)
    assert MARK not in output, output
    assert "Traceback" not in output, output
    assert code == 2 if f"{which}_dsn: " in output else code == 0, output

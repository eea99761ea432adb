"""Every option of every command, fed what a careless operator types (zero, negative, ``nan``,
``inf``, huge, a word for a number, blank, a flag with a value, an unknown flag): exit code 2
and one line on stderr naming the option or its setting, never a traceback, and nothing
connects (each is refused while parsing or loading the configuration, so no service runs).

``test_the_table_covers_every_option`` fails when a command gains an option this table does
not feed."""

from __future__ import annotations

import os

import click
import pytest
from click.testing import CliRunner

from flightstate_runner.cli import _config, cli, command
from flightstate_runner.maintenance import register
from tests.runner._cli import run_cli

COUNT = ["0", "-1", "nan", "inf", "1e3", "99999999999999999999", "many", ""]
POSITIVE = ["0", "-1", "nan", "inf", "-inf", "1e400", "ten", ""]
NOT_NEGATIVE = ["-1", "-1e9", "nan", "inf", "1e308", "ten", ""]
SEED = ["-1", "nan", "4294967296", "one", ""]
FLID = ["", " ", "\t", "X" * 65]
FLAG = ["=1", "=yes"]  # a flag given a value: "--json=1"
DAY = ["yesterday", "2026-13-01", "", "nan"]

#: (command, option or argument, careless values); a flag's values are appended to it.
TABLE: list[tuple[str, str, list[str]]] = [
    ("demo", "--messages", COUNT), ("demo", "--flights", COUNT), ("demo", "--seed", SEED),
    ("demo", "--show", ["-1", "nan", "99999999999", "two", ""]),
    ("demo", "--summary-json", ["", "/", "/no/such/dir/summary.json"]), ("demo", "--keep", FLAG),
    ("selftest", "--store", ["", "notadsn", "mysql://root@127.0.0.1/x", "nan"]),
    ("run", "--until-idle", FLAG),
    ("run", "--metrics-port", ["0", "-1", "65536", "nan", "http", ""]),
    ("run", "--metrics-bind", ["", "not an address", "*"]),
    ("run", "--holder", ["", " ", "a\tb", "h" * 201]),
    ("config", "--json", FLAG), ("status", "--json", FLAG),
    ("requeue", "MESSAGE_ID", ["0", "-1", "nan", "1.5", "99999999999999999999", "abc", ""]),
    ("show", "FLID", FLID), ("show", "--json", FLAG),
    ("generate", "--messages", COUNT), ("generate", "--flights", COUNT),
    ("generate", "--seed", SEED), ("generate", "--force", FLAG),
    ("topics", "--timeout", POSITIVE),
    ("cleanup", "--retention-days", NOT_NEGATIVE), ("cleanup", "--quiet-days", NOT_NEGATIVE),
    ("cleanup", "--limit", COUNT),
    ("request-schedule", "--from", DAY), ("request-schedule", "--to", DAY),
    ("requests", "--resend", FLAG), ("requests", "--json", FLAG),
    ("requests", "--timeout-minutes", POSITIVE),
    ("requests", "--max-attempts", ["0", "-1", "1001", "nan", "three", ""]),
    ("republish", "--flid", FLID),
    ("history", "FLID", FLID), ("history", "--json", FLAG),
]  # fmt: skip

#: the global options, fed before the command and after it (``config``: connects to nothing)
GLOBAL: list[tuple[str, list[str]]] = [
    ("--config", ["/no/such/site.toml", "/"]),
    ("--store-dsn", ["notadsn", "mysql://root@127.0.0.1/x", "postgresql://u:p@ss@h/db"]),
    ("--pg-dsn", ["notadsn", "oracle://u:p@h:1521/x"]),
    ("--oracle-client-dir", ["/no/such/instantclient"]),
    ("--mysql-dsn", ["notadsn", "mysql://root@127.0.0.1:99999/x"]),
    ("--inbox", ["", "MYSQL", "postgres", "0"]),
    ("--kafka-bootstrap", ["nan", "broker:0", "broker:65536", "broker:port"]),
    ("--airport-tz", ["", "Mars/Olympus", "UTC+8"]),
    ("--opday-cutover", ["", "24:00", "nan", "7"]),
    ("--inbox-table", ["", "cminmsgs; drop table x", "1abc"]),
    ("--log-level", ["", "verbose", "0"]),
    ("--text-logs", FLAG),
]  # fmt: skip

_NEEDS = {"request-schedule": {"--from": ["--to", "2026-12-05"],
                               "--to": ["--from", "2026-12-05"]}}  # fmt: skip


def _commands() -> dict[str, click.Command]:
    assert isinstance(cli, click.Group)
    if "cleanup" not in cli.commands:
        register(cli, command, _config)  # as main() does
    return dict(cli.commands)


def _argv(name: str, where: str, value: str) -> list[str]:
    if where.isupper():  # an argument
        return [name, value]
    given = [f"{where}{value}"] if value.startswith("=") else [where, value]
    return [name, *given, *_NEEDS.get(name, {}).get(where, [])]


def _cases() -> list[list[str]]:
    cases = [_argv(name, where, value) for name, where, values in TABLE for value in values]
    for option, values in GLOBAL:
        for value in values:
            given = [f"{option}{value}"] if value.startswith("=") else [option, value]
            cases += [[*given, "config"], ["config", *given]]
    cases += [[name, "--bogus"] for name in _commands()]
    cases += [["--bogus", "status"], ["statuss"], ["status", "extra"]]
    return cases


def _named(argv: list[str]) -> set[str]:
    """What the line may name: the option or argument, or the setting it sets."""
    words = {w.split("=")[0] for w in argv if w.startswith("-")} | {"FLID", "MESSAGE_ID"}
    words |= {w.lstrip("-").replace("-", "_") for w in words} | {"config file", "statuss", "extra"}
    return {w for w in words if w}


def _env() -> dict[str, str | None]:
    """No FLIGHTSTATE_* setting from the calling environment: nothing configured to reach."""
    return {key: None for key in os.environ if key.upper().startswith("FLIGHTSTATE_")}


@pytest.mark.parametrize("argv", _cases(), ids=" ".join)
def test_a_careless_value_is_one_line_and_exit_2(argv: list[str]) -> None:
    _commands()
    done = CliRunner(env=_env()).invoke(cli, argv)
    lines = done.stderr.splitlines()
    assert done.exit_code == 2, (done.output, done.exception)
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(("usage error: ", "configuration error: ")), lines[0]
    assert any(word in lines[0] for word in _named(argv)), lines[0]
    assert "Traceback" not in done.output


@pytest.mark.parametrize(
    "argv",
    [["generate", "--flights", "0"], ["generate", "--messages", "0"],
     ["generate", "--messages", "-1"], ["topics", "--timeout", "-1"], ["demo", "--flights", "0"]],
    ids=" ".join,
)  # fmt: skip
def test_the_installed_entry_point_refuses_too(argv: list[str]) -> None:
    """The same through the console entry point (a real process, real stderr)."""
    done = run_cli(*argv, timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith(f"usage error: Invalid value for '{argv[1]}': ")
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stdout == ""


def test_the_table_covers_every_option() -> None:
    fed = {(name, where) for name, where, _ in TABLE}
    for name, found in _commands().items():
        for param in found.params:
            if getattr(param, "hidden", False):
                continue  # the global options, fed through GLOBAL
            shown = param.opts[0] if param.opts[0].startswith("--") else param.human_readable_name
            assert (name, shown) in fed, f"{name} {shown}: no careless values in TABLE"
    group = {p.opts[0] for p in cli.params if p.opts[0] not in ("--version", "-h", "--help")}
    assert group == {option for option, _ in GLOBAL}

"""The command line's shared parts: the global options, accepted before the command and
after it (``flightstate --store-dsn X status`` and ``flightstate status --store-dsn X``),
``--version``, and usage errors told in one line.

One list of global options (``GLOBAL_OPTIONS``) is given to the group and, hidden from the
command's help, to every command the group holds (``FlightstateGroup.add_command``). Each
option stores what was typed into the context object the commands share; an option after
the command overrides the same option before it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from flightstate_runner.version import print_version

__all__ = ["FlightstateGroup", "global_options", "shared"]

F = TypeVar("F", bound=Callable[..., Any])
_EPILOG = "Global options (flightstate --help) may also follow the command."


def shared(ctx: click.Context) -> dict[str, Any]:
    """The context object every command of one invocation shares: the TOML file, the
    setting overrides typed as options, and whether logs are JSON lines."""
    obj: dict[str, Any] = ctx.ensure_object(dict)
    obj.setdefault("path", None)
    obj.setdefault("options", {})
    obj.setdefault("json_logs", True)
    return obj


def _remember(ctx: click.Context, param: click.Parameter, value: object) -> None:
    """Keep a typed global option; one not typed (None, or a flag left off) keeps what an
    earlier position gave."""
    if value is None or value is False or param.name is None:
        return
    obj = shared(ctx)
    if param.name == "config_path":
        obj["path"] = value
    elif param.name == "text_logs":
        obj["json_logs"] = False
    else:
        obj["options"][param.name] = value


#: (declarations, keywords) of each global option; the value reaches ``shared(ctx)``.
GLOBAL_OPTIONS: Sequence[tuple[tuple[str, ...], dict[str, Any]]] = (
    (("--config", "config_path"),
     {"type": click.Path(path_type=Path), "help": "TOML file (table [flightstate] or top level)."}),
    (("--store-dsn",),
     {"help": "State store: postgresql://, oracle://user:pw@host:port/service or memory:// "
              "(FLIGHTSTATE_STORE_DSN)."}),
    (("--pg-dsn",), {"help": "PostgreSQL state store, alias of --store-dsn (FLIGHTSTATE_PG_DSN)."}),
    (("--oracle-client-dir",),
     {"help": "Oracle Client libraries (FLIGHTSTATE_ORACLE_CLIENT_DIR)."}),
    (("--inbox",),
     {"type": click.Choice(["mysql", "store"]),
      "help": "Where messages are read: the AODB's MySQL table (mysql, the default) or a "
              "lab table in the store (store) (FLIGHTSTATE_INBOX)."}),
    (("--mysql-dsn",), {"help": "MySQL/MariaDB inbox, mysql://... (FLIGHTSTATE_MYSQL_DSN)."}),
    (("--kafka-bootstrap",), {"help": "Kafka bootstrap host:port (FLIGHTSTATE_KAFKA_BOOTSTRAP)."}),
    (("--airport-tz",), {"help": "Airport time zone (default Asia/Shanghai)."}),
    (("--opday-cutover",), {"help": "Operation-day cut-over HH:MM (default 00:00)."}),
    (("--inbox-table",), {"help": "Inbox table name (default cminmsgs)."}),
    (("--log-level",), {"help": "DEBUG, INFO, WARNING or ERROR."}),
    (("--text-logs",), {"is_flag": True, "help": "Plain text logs instead of JSON lines."}),
)  # fmt: skip


def _global_params(*, hidden: bool) -> list[click.Option]:
    return [click.Option(list(declared), expose_value=False, callback=_remember, hidden=hidden,
                         **keywords)
            for declared, keywords in GLOBAL_OPTIONS]  # fmt: skip


def global_options(func: F) -> F:
    """Declare the global options, and ``--version``, on the group."""
    for declared, keywords in reversed(GLOBAL_OPTIONS):
        func = click.option(*declared, expose_value=False, callback=_remember, **keywords)(func)
    return click.option("--version", is_flag=True, expose_value=False, is_eager=True,
                        callback=print_version,
                        help="Print the installed version and exit.")(func)  # fmt: skip


class FlightstateGroup(click.Group):
    """The ``flightstate`` group: its commands accept the global options too, and a usage
    error (unknown command or option, a value of the wrong type or range) is one line on
    stderr and exit code 2, not click's usage block."""

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        cmd.params.extend(_global_params(hidden=True))
        cmd.epilog = cmd.epilog or _EPILOG
        super().add_command(cmd, name)

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:  # fmt: skip
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            result = super().main(args, prog_name, complete_var, False, **extra)
        except click.ClickException as exc:
            click.echo(_one_line(exc), err=True)
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("aborted", err=True)
            sys.exit(1)
        sys.exit(result if isinstance(result, int) else 0)


def _one_line(exc: click.ClickException) -> str:
    message = " ".join(exc.format_message().split())
    if not isinstance(exc, click.UsageError):
        return f"error: {message}"
    path = exc.ctx.command_path if exc.ctx is not None else "flightstate"
    return f"usage error: {message} (see '{path} --help')"

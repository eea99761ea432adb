"""Operator commands over the store backend's ``OperatorQueries`` (``flightstate_core.ports``).

``cleanup`` (retention), ``request-schedule`` (RQFD into coutmsgs), ``requests`` (match
answers, resend, list), ``republish`` (fresh ``schd`` records of the current state),
``history FLID``. Each opens its adapters when it runs; ``register`` only declares them.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import click

from flightstate_core.domain.errors import ConfigError
from flightstate_core.engine.lifecycle import CleanupReport
from flightstate_core.ports import OperatorQueries
from flightstate_runner.config import RunnerConfig
from flightstate_runner.inputs import FLID, count, finite
from flightstate_runner.wiring import backend_for, require, require_schema

__all__ = ["register"]

Loader = Callable[..., RunnerConfig]
_MAX_DAYS = 3650.0  # as the FLIGHTSTATE_RETENTION_DAYS / QUIET_DAYS settings


@contextlib.contextmanager
def _queries(config: RunnerConfig, command: str) -> Iterator[OperatorQueries]:
    """The operator queries of the configured store (checked to be migrated), closed after."""
    backend = require_schema(backend_for(config, command))
    queries = backend.queries()
    try:
        yield queries
    finally:
        queries.close()
        backend.close()


@contextlib.contextmanager
def _known_flights(config: RunnerConfig, flids: list[str]) -> Iterator[set[str]]:
    """Which of *flids* the store holds (a typo must not pass for success)."""
    backend = backend_for(config, "republish")
    store = backend.store(cache=False)
    try:
        yield set(store.get_flights(flids))
    finally:
        close = getattr(store, "close", None)
        if close is not None:
            close()
        backend.close()


def _local(text: str, config: RunnerConfig, option: str) -> datetime:
    """``YYYY-MM-DD[ HH:MM]`` in the airport zone."""
    try:
        value = datetime.fromisoformat(text)
    except ValueError as exc:
        raise ConfigError(f"{option}: {text!r} is not YYYY-MM-DD[ HH:MM]") from exc
    return value if value.tzinfo else value.replace(tzinfo=ZoneInfo(config.airport_tz))


def _echo_json(value: Any) -> None:
    click.echo(json.dumps(value, ensure_ascii=False, indent=2, default=str))


def register(cli: click.Group, command: Callable[..., Any], load: Loader) -> None:
    """Add the maintenance commands to *cli* (``command`` maps errors to exit codes)."""
    _register_cleanup(cli, command, load)
    _register_requests(cli, command, load)
    _register_operator(cli, command, load)


def _register_cleanup(cli: click.Group, command: Callable[..., Any], load: Loader) -> None:
    @cli.command()
    @click.option(
        "--retention-days",
        type=finite(0, _MAX_DAYS),
        help="Keep ended flights this long (default FLIGHTSTATE_RETENTION_DAYS, 3).",
    )
    @click.option(
        "--quiet-days",
        type=finite(0, _MAX_DAYS),
        help="... and this long without a message (default FLIGHTSTATE_QUIET_DAYS, 2).",
    )
    @click.option("--limit", type=count(1, 10**9), help="Examine at most this many candidates.")
    @click.pass_context
    @command
    def cleanup(ctx: click.Context, retention_days: float | None, quiet_days: float | None,
                limit: int | None) -> None:  # fmt: skip
        """Archive and remove flights that have ended (retention rules)."""
        from flightstate_runner.housekeeping import retention_policy  # noqa: PLC0415

        # Options override the configured settings, as every other option does.
        config = load(ctx, retention_days=retention_days, quiet_days=quiet_days)
        with _queries(config, "cleanup") as queries:
            report = queries.run_cleanup(retention_policy(config), now=datetime.now(UTC),
                                         limit=limit)  # fmt: skip
        click.echo(cleanup_summary(report, config, limit))


def cleanup_summary(report: CleanupReport, config: RunnerConfig, limit: int | None) -> str:
    """What ``cleanup`` did, in words: the rules applied, candidates examined, and why more
    flights than candidates may go (related flights are removed with them)."""
    lines = [
        f"rules: more than {config.retention_days:g} day(s) past the operation day and ended "
        f"(deleted, or a terminal field set) or {config.quiet_days:g} day(s) without a "
        f"message; no operation day: {config.null_day_quiet_days:g} day(s) without a message",
        f"examined {report.examined} candidate(s)"
        + (f" (--limit {limit})" if limit is not None else "")
        + f" in {report.batches} batch(es); kept {report.kept} (not releasable yet, "
        "or a related flight is not)",
        f"removed {report.removed} flight(s) ({report.tombstoned} tombstoned)",
    ]
    extra = report.removed - (report.examined - report.kept)
    if extra > 0:
        lines.append(
            f"  {extra} of them were not candidates themselves: a flight's masters and "
            "codeshares are archived and removed together with it"
        )
    return "\n".join(lines)


def _register_requests(cli: click.Group, command: Callable[..., Any], load: Loader) -> None:
    @cli.command("request-schedule")
    @click.option("--from", "start", required=True, help="Airport-local YYYY-MM-DD[ HH:MM].")
    @click.option("--to", "end", required=True, help="Airport-local YYYY-MM-DD[ HH:MM].")
    @click.pass_context
    @command
    def request_schedule_cmd(ctx: click.Context, start: str, end: str) -> None:
        """Send a daily-schedule request (RQFD) through coutmsgs."""
        from flightstate_mysql.outbound import MySqlOutbound  # noqa: PLC0415

        config = load(ctx)
        window = (_local(start, config, "--from"), _local(end, config, "--to"))
        if window[0] > window[1]:
            raise ConfigError("--from: must not be after --to")
        outbound = MySqlOutbound(require(config, "mysql_dsn", "request-schedule"),
                                 local_tz=config.airport_tz)  # fmt: skip
        try:
            with _queries(config, "request-schedule") as queries:
                request_id = queries.request_schedule(outbound, *window, now=datetime.now(UTC))
        finally:
            outbound.close()
        click.echo(f"request {request_id} sent ({window[0]:%Y-%m-%d %H:%M} .. "
                   f"{window[1]:%Y-%m-%d %H:%M})")  # fmt: skip

    @cli.command()
    @click.option("--resend", is_flag=True, help="Also resend unanswered requests.")
    @click.option("--timeout-minutes", type=finite(0, 7 * 24 * 60, low_open=True), default=10.0,
                  show_default=True)  # fmt: skip
    @click.option("--max-attempts", type=count(1, 1000), default=3, show_default=True)
    @click.option("--json", "as_json", is_flag=True, help="One JSON document.")
    @click.pass_context
    @command
    def requests(ctx: click.Context, resend: bool, timeout_minutes: float,
                 max_attempts: int, as_json: bool) -> None:  # fmt: skip
        """Match applied SCHD RESP answers to requests, optionally resend, list them."""
        config = load(ctx)
        now = datetime.now(UTC)
        with _queries(config, "requests") as queries:
            matched = queries.reconcile_responses(now=now)
            if resend:
                from flightstate_mysql.outbound import MySqlOutbound  # noqa: PLC0415

                outbound = MySqlOutbound(require(config, "mysql_dsn", "requests --resend"),
                                         local_tz=config.airport_tz)  # fmt: skip
                try:
                    queries.resend_due(outbound, now=now,
                                       timeout=timedelta(minutes=timeout_minutes),
                                       max_attempts=max_attempts)  # fmt: skip
                finally:
                    outbound.close()
            report = queries.request_status().as_dict()
        document = {"matched": {"answered": matched.answered,
                                "unsolicited": matched.unsolicited}, **report}  # fmt: skip
        if as_json:
            _echo_json(document)
        else:
            from flightstate_runner.views import render_requests  # noqa: PLC0415

            click.echo(render_requests(document))


def _register_operator(cli: click.Group, command: Callable[..., Any], load: Loader) -> None:
    @cli.command()
    @click.option("--flid", "flids", type=FLID, multiple=True,
                  help="Only these flights (repeatable).")  # fmt: skip
    @click.pass_context
    @command
    def republish(ctx: click.Context, flids: tuple[str, ...]) -> None:
        """Write a fresh schd record of the current state (all flights, or --flid)."""
        config = load(ctx)
        with _queries(config, "republish") as queries:
            if flids:
                with _known_flights(config, list(flids)) as known:
                    unknown = sorted(set(flids) - known)
                if unknown:  # say so, and write nothing: a typo must not pass for success
                    click.echo(f"no flight {', '.join(unknown)}; nothing written", err=True)
                    sys.exit(1)
            written = queries.republish(now=datetime.now(UTC), flids=list(flids) or None)
        click.echo(f"{written} record(s) written to the outbox")

    @cli.command()
    @click.argument("flid", type=FLID)
    @click.option("--json", "as_json", is_flag=True, help="The entries as a JSON list.")
    @click.pass_context
    @command
    def history(ctx: click.Context, flid: str, as_json: bool) -> None:
        """The messages that changed FLID, in order, with the fields each changed."""
        from flightstate_runner.views import render_history  # noqa: PLC0415

        config = load(ctx)
        with _queries(config, "history") as queries:
            entries = queries.flight_history(flid)
        if not entries:
            click.echo(f"no flight {flid} (no message ever changed it)", err=True)
            sys.exit(1)
        if as_json:
            _echo_json(entries)
        else:
            click.echo(render_history(entries))

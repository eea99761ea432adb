"""Throughput of the pure core's ``decide``: one FLOP, and a 2,000-flight DNLD applied to
an empty map and to a map that already holds those flights (every record changes one
value, so each flight is rewritten and its ``schd`` payload rebuilt). ``wire`` alone is
measured too. Plain script: ``python benchmarks/bench_core.py``; prints one table.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import Decision, DecisionContext, Outcome
from flightstate_core.domain.handlers import decide
from flightstate_core.domain.messages import FlightRecord
from flightstate_core.domain.state import FlightState
from flightstate_core.domain.wire import wire
from flightstate_testing.models import collection_items, flop, fltr, item, schedule

CONFIG = CoreConfig()
NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
FLIGHTS = 2000


def _flight(index: int, stand: str) -> FlightRecord:
    """A realistic FLTR: thirteen scalars and three short collections."""
    sodt = f"{23 + index % 2:02d}JAN21{index % 24:02d}{index % 60:02d}"
    route = collection_items(item("1", APCD="XIY", SCAT=sodt))
    erut = collection_items(item("1", APCD="CTU", SCDT=sodt), item("2", APCD="XIY", SCAT=sodt))
    psdt = collection_items(item("1", PSST=stand, STST=sodt, STET=sodt))
    return fltr(
        str(100000 + index), collections={"ROUT": route, "ERUT": erut, "PSDT": psdt},
        ALCD="YG", FLNO=f"YG{index:04d}", MVIN="AD"[index % 2], SODT=sodt, FLTY="W", FLIN="D",
        ACFT="733", RENO=f"B{index:04d}", TRML="T2", STND=stand, PHAG="110009", EXSC="RCFLOP",
        FTSS="RCFLOP",
    )  # fmt: skip


def _decide(current: dict[str, FlightState], message: object) -> Decision:
    decision = decide(current, message, CONFIG, DecisionContext(1, NOW))  # type: ignore[arg-type]
    assert decision.outcome is Outcome.SUCCEEDED, decision.reason
    return decision


def _rate(fn: Callable[[], object], min_seconds: float = 2.0) -> tuple[float, int]:
    """Calls per second of ``fn`` over at least ``min_seconds``."""
    fn()  # warm caches (time parsing, plans)
    calls, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < min_seconds:
        fn()
        calls += 1
    return calls / elapsed, calls


def main() -> None:
    """Measure and print the table."""
    first = schedule("DNLD", *(_flight(i, "504") for i in range(FLIGHTS)), recs=FLIGHTS)
    populated = dict(_decide({}, first).states)
    second = schedule("DNLD", *(_flight(i, "505") for i in range(FLIGHTS)), recs=FLIGHTS)
    target = populated["100000"]
    one_flop = flop("STND", fltr(target.flid, STND="B12"))
    flop_rate, _ = _rate(lambda: _decide({target.flid: target}, one_flop))
    wire_rate, _ = _rate(lambda: wire(target, CONFIG))
    empty_rate, _ = _rate(lambda: _decide({}, first), 6.0)
    full_rate, _ = _rate(lambda: _decide(populated, second), 6.0)
    rows = [
        ("decide FLOP/STND (1 flight)", flop_rate, 1),
        ("wire(state) (1 flight)", wire_rate, 1),
        (f"decide DNLD {FLIGHTS} -> empty map", empty_rate, FLIGHTS),
        (f"decide DNLD {FLIGHTS} -> populated map", full_rate, FLIGHTS),
    ]
    print(f"{'case':<40} {'calls/s':>10} {'flights/s':>11} {'ms/call':>9} {'vs FLOP':>8}")
    for name, rate, flights in rows:
        per_flight = rate * flights
        print(
            f"{name:<40} {rate:>10.1f} {per_flight:>11.0f} {1000 / rate:>9.3f} "
            f"{per_flight / flop_rate:>7.2f}x"
        )
    print(f"populated/empty DNLD time ratio: {empty_rate / full_rate:.2f}")


if __name__ == "__main__":
    main()

"""How fast this boot of the machine is, measured with work that none of our code touches.

The same commit has measured a pump rate of 1,546 msg/s on one boot and 3,798 on another,
so a figure means little without the machine's speed beside it. Two references:

- CPU: a fixed JSON round trip (pure CPython) and a fixed lxml parse, operations per second
  of one core, best of several short rounds (the machine is shared, best is least noisy);
- durable commit: the median latency of a one-row INSERT committed with
  ``synchronous_commit = on`` in a throwaway table (what a WAL flush costs on this disk).
"""

from __future__ import annotations

import json
import statistics
import time
import timeit
from collections.abc import Callable

import psycopg
from lxml import etree

_DOCUMENT = {
    "flid": 123456,
    "gates": [{"code": f"G{n}", "start": "20261130120000", "seq": n} for n in range(8)],
    "delays": [{"code": "93", "minutes": 12}, {"code": "41", "minutes": 3}],
}
_XML = (
    b"<MSG><META><SNDR>AODB</SNDR><TYPE>FLOP</TYPE><STYP>GTDT</STYP></META>"
    b"<FLOP><FLID>123456</FLID><GTLS>"
    + b"".join(b"<GATE><CODE>G%d</CODE><ESTR>20261130120000</ESTR></GATE>" % n for n in range(3))
    + b"</GTLS></FLOP></MSG>"
)
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)


def _best_rate(work: Callable[[], object], rounds: int = 5) -> float:
    """Calls per second of *work*: the best of *rounds* timeit rounds of at least 0.2 s."""
    timer = timeit.Timer(work)
    calls, _ = timer.autorange()
    return calls / min(timer.repeat(repeat=rounds, number=calls))


def json_round_trips() -> float:
    """Pure-CPython reference: encode and decode a small fixed document, per second."""
    return _best_rate(lambda: json.loads(json.dumps(_DOCUMENT)))


def lxml_parses() -> float:
    """C-extension reference: parse a fixed three-gate FLOP, per second."""
    return _best_rate(lambda: etree.fromstring(_XML, _PARSER))


def durable_commit_ms(dsn: str, commits: int = 200) -> float:
    """Median milliseconds of one durable single-row commit in a throwaway table."""
    latencies: list[float] = []
    with psycopg.connect(dsn) as conn:
        conn.execute("SET synchronous_commit = on")
        conn.execute("CREATE TABLE bench_commit_probe (n integer)")
        conn.commit()
        try:
            for n in range(commits):
                started = time.perf_counter()
                conn.execute("INSERT INTO bench_commit_probe (n) VALUES (%s)", (n,))
                conn.commit()
                latencies.append(time.perf_counter() - started)
        finally:
            conn.execute("DROP TABLE bench_commit_probe")
            conn.commit()
    return statistics.median(latencies) * 1000


def describe(dsn: str) -> str:
    """One line naming this boot's speed, to print beside a benchmark's table."""
    return (
        f"machine: JSON round trips {json_round_trips():,.0f}/s, lxml FLOP parses "
        f"{lxml_parses():,.0f}/s, PostgreSQL durable commit median {durable_commit_ms(dsn):.2f} ms"
    )

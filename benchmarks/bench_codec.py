"""Codec throughput: ``decode`` versus plain ``lxml.etree.fromstring`` on the same bytes.

Run: ``PYTHONPATH=. python benchmarks/bench_codec.py [--flights 2000] [--seconds 3]``.
Prints msgs/s and MB/s for FLOP messages and a generated SCHD DNLD, and the ratio
decode time / fromstring time (target: at most 8). Measured in process CPU time, in
alternating rounds, so that other load on a shared machine does not skew the ratio.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from lxml import etree

from flightstate_core.domain.codec import decode, encode
from flightstate_testing.seeded import build_dnld, build_flop

TARGET_RATIO = 8.0


ROUNDS = 9
# CPU time of this process, not wall time: the benchmark machine is shared, and other
# processes' load must not count against either side.
clock = time.process_time


def _batch(func: Callable[[], object], seconds: float) -> int:
    """How many calls of ``func`` take about ``seconds`` of CPU (at least one)."""
    func()  # warm caches (time parsing, parser objects)
    calls = 1
    while True:
        start = clock()
        for _ in range(calls):
            func()
        elapsed = clock() - start
        if elapsed >= seconds or calls >= 1 << 20:
            return max(1, int(calls * seconds / max(elapsed, 1e-9)))
        calls *= 2


def _seconds_per_call(func: Callable[[], object], calls: int) -> float:
    start = clock()
    for _ in range(calls):
        func()
    return (clock() - start) / calls


def _row(name: str, data: bytes, seconds: float) -> tuple[str, float, float, float]:
    """Alternating rounds of fromstring and decode; best rates and the median ratio."""
    assert decode(data) is not None
    plain_fn: Callable[[], object] = lambda: etree.fromstring(data)  # noqa: E731
    ours_fn: Callable[[], object] = lambda: decode(data)  # noqa: E731
    round_seconds = seconds / ROUNDS
    plain_calls = _batch(plain_fn, round_seconds / 2)
    ours_calls = _batch(ours_fn, round_seconds / 2)
    plain_times: list[float] = []
    ours_times: list[float] = []
    for _ in range(ROUNDS):
        plain_times.append(_seconds_per_call(plain_fn, plain_calls))
        ours_times.append(_seconds_per_call(ours_fn, ours_calls))
    ratios = sorted(o / p for o, p in zip(ours_times, plain_times, strict=True))
    return name, 1 / min(plain_times), 1 / min(ours_times), ratios[len(ratios) // 2]


def main(argv: list[str] | None = None) -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--flights", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=3.0, help="per measurement")
    args = parser.parse_args(argv)
    cases = [
        ("FLOP GTDT (3 gates)", build_flop("GTDT", seed=1)),
        ("FLOP ESTT", build_flop("ESTT", seed=1)),
        (f"SCHD DNLD {args.flights} flights", build_dnld(args.flights, seed=1)),
    ]
    header = (
        f"{'message':<28}{'bytes':>10}{'lxml msg/s':>12}{'decode msg/s':>14}"
        f"{'decode MB/s':>13}{'ratio':>8}"
    )
    print(header)
    print("-" * len(header))
    for name, data in cases:
        _, plain, ours, ratio = _row(name, data, args.seconds)
        mbps = ours * len(data) / 1e6
        flag = "" if ratio <= TARGET_RATIO else "  (over target)"
        print(
            f"{name:<28}{len(data):>10}{plain:>12.1f}{ours:>14.1f}{mbps:>13.2f}{ratio:>8.2f}{flag}"
        )
    dnld = decode(cases[-1][1])
    encode_rate = 1 / _seconds_per_call(lambda: encode(dnld), 2)
    print(f"\nencode SCHD DNLD: {encode_rate:.1f} msg/s")
    print("CPU time of this process; rates are the best round, ratio the median of rounds")


if __name__ == "__main__":
    main()

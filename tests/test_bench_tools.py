"""The benchmark tooling: `nox -s bench`'s launcher and the per-phase memory helpers.

The launcher once handed the script's path to the script's own argparse, so every
benchmark with options stopped with "unrecognized arguments" before measuring anything.
"""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = sorted((ROOT / "benchmarks").glob("bench_*.py"))

SCRIPT = """
import argparse, sys

def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"rounds={args.rounds} argv0={sys.argv[0]}")
"""


def run_bench() -> str:
    namespace = runpy.run_path(str(ROOT / "noxfile.py"))
    value = namespace["RUN_BENCH"]
    assert isinstance(value, str)
    return value


def _bench_module(name: str) -> dict[str, Any]:
    """A module of benchmarks/, loaded as the scripts load it (benchmarks/ on the path)."""
    sys.path[:0] = [str(ROOT / "benchmarks")]
    try:
        return runpy.run_path(str(ROOT / "benchmarks" / f"{name}.py"))
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


def test_launcher_runs_main_with_the_scripts_defaults(tmp_path: Path) -> None:
    script = tmp_path / "bench_probe.py"
    script.write_text(SCRIPT)
    result = subprocess.run(
        [sys.executable, "-c", run_bench(), str(script)],
        cwd=tmp_path, capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"rounds=3 argv0={script}"


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda path: path.name)
def test_every_benchmark_script_has_a_main(script: Path) -> None:
    # Loaded as the launcher loads it: not as __main__, so nothing measures here.
    namespace = _bench_module(script.stem)
    assert callable(namespace.get("main")), f"{script.name} has no main()"


# ---------------------------------------------------------------- benchmarks/memory.py


def _add(left: int, right: int) -> tuple[int, int]:
    return left + right, os.getpid()


def _fail(name: str) -> None:
    raise ValueError(f"no such phase: {name}")


def test_forked_returns_the_phase_result_from_a_child() -> None:
    total, pid = _bench_module("memory")["forked"](_add, 2, 3)
    assert total == 5
    assert pid != os.getpid()


def test_forked_raises_the_childs_failure_with_its_text() -> None:
    with pytest.raises(RuntimeError, match="_fail failed in its child") as caught:
        _bench_module("memory")["forked"](_fail, "warm-up")
    assert "ValueError: no such phase: warm-up" in str(caught.value)


def test_peak_growth_sees_memory_held_during_the_phase() -> None:
    with _bench_module("memory")["PeakGrowth"]() as peak:
        held = b"x" * (64 * 1024 * 1024)  # written, so every page is resident
    assert len(held) == 64 * 1024 * 1024
    assert 60 <= peak.mib < 200


# --------------------------------------------------------------- benchmarks/threads.py


def test_thread_cpu_names_this_thread_and_counts_its_work() -> None:
    thread_cpu = _bench_module("threads")["thread_cpu"]
    before = thread_cpu()["MainThread"]
    deadline = time.process_time() + 0.3
    while time.process_time() < deadline:  # burn CPU on this thread
        pass
    assert thread_cpu()["MainThread"] - before >= 0.2


def test_cpu_line_gives_rate_and_microseconds_per_message() -> None:
    cpu_line = _bench_module("threads")["cpu_line"]
    line = cpu_line(3000, {"apply": 1.0, "idle": 2.0}, {"apply": 1.3, "idle": 2.0}, 0.5, 1000)
    assert line.split() == ["3000", "done", "4000", "msg/s", "CPU", "µs/msg:", "apply=150"]


def test_cpu_sampler_prints_a_window_on_exit(capsys: pytest.CaptureFixture[str]) -> None:
    done = iter([100, 400])
    with _bench_module("threads")["CpuSampler"](lambda: next(done), interval=60):
        pass
    done_count, done_word, rate, unit = capsys.readouterr().out.split()[:4]
    assert (done_count, done_word, unit) == ("400", "done", "msg/s")
    assert float(rate) > 0


# ----------------------------------------------------- benchmarks/latency_table.py


def test_due_count_is_a_steady_arrival_with_the_first_message_at_once() -> None:
    due = _bench_module("latency_table")["due_count"]
    assert [due(t, 50, 100) for t in (-1, 0, 0.019, 0.02, 1.0, 99.0)] == [0, 1, 1, 2, 51, 100]


def test_percentiles_are_nearest_rank_in_milliseconds() -> None:
    percentiles = _bench_module("latency_table")["Percentiles"]
    sample = percentiles.of([n / 1000 for n in range(100, 0, -1)])  # 1..100 ms, unsorted
    assert (sample.count, sample.p50, sample.p95, sample.p99, sample.max) == (
        100,
        50.0,
        95.0,
        99.0,
        100.0,
    )
    with pytest.raises(ValueError, match="no samples"):
        percentiles.of([])


def test_summary_counts_messages_never_seen_and_the_table_says_so() -> None:
    table = _bench_module("latency_table")
    sent = {1: 10.0, 2: 10.5, 3: 11.0}
    result = table["summarize"]("steady 2/s", sent, 3, {1: 10.1, 2: 10.6, 3: 11.2}, {1: 10.3})
    assert (result.sent, result.commits, result.seconds, result.rate) == (3, 3, 1.0, 3.0)
    assert result.committed.count == 3
    assert result.committed.max == pytest.approx(200.0)
    assert result.consumed.count == 1
    assert (result.missing_committed, result.missing_consumed) == (0, 2)
    lines = table["render"]([result], [("PG durable commit", result.committed, None)])
    assert "NOT SEEN: 0 state commits, 2 schd records" in "\n".join(lines)
    assert lines[-1].startswith("floor: PG durable commit (3)")


# ----------------------------------------------------- benchmarks/bench_latency.py


@pytest.mark.pg
@pytest.mark.mysql
@pytest.mark.kafka
@pytest.mark.slow
def test_latency_bench_quick_measures_every_message(
    pg_server_dsn: str, mysql_dsn: str, kafka_bootstrap: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The quick mode end to end, twice (the real runner as its own process): every message
    sent has both latencies, each phase's percentiles are ordered, and records typically
    come after their state commits; both runs' tables and the summary across them are
    printed. No timing is asserted."""
    mysql_admin = os.environ.get("FLIGHTSTATE_TEST_MYSQL_DSN") or "mysql://root@127.0.0.1:3306/"
    phases, floor, histograms, cpu = _bench_module("bench_latency")["main"]([
        "--quick", "--repeat", "2", "--bootstrap", kafka_bootstrap, "--pg-admin",
        pg_server_dsn, "--mysql-admin", mysql_admin,
    ])  # fmt: skip
    printed = capsys.readouterr().out
    assert printed.count("inbox commit -> state committed") == 2
    assert "across 2 runs, inbox commit -> schd consumed (ms)" in printed
    assert "  steady 50/s p99: median" in printed
    assert "  idle CPU, % of one core: median" in printed
    assert [(p.name, p.sent) for p in phases] == [("steady 50/s", 100), ("burst", 100)]
    assert phases[1].commits == 1
    for phase in phases:
        assert (phase.missing_committed, phase.missing_consumed) == (0, 0), phase
        assert phase.committed.count == phase.consumed.count == phase.sent
        for sample in (phase.committed, phase.consumed):
            assert 0 <= sample.p50 <= sample.p95 <= sample.p99 <= sample.max
        # A record is produced only after its state commit. (Not asserted per message: the
        # log line of a batch's last message may be written after a fast dispatcher sent it.)
        assert phase.consumed.p50 >= phase.committed.p50
    assert [label for label, _, _ in floor] == [
        "PG durable commit",
        "produce -> consume",
        "commit + produce -> consume",
        "transactional produce -> consume",
        "commit + transactional produce -> consume",
    ]
    assert "steady 50/s: schd p50 " in printed  # its ratio to each floor
    assert all(s.count == 20 for _, *samples in floor for s in samples if s is not None)
    # The runner's own freshness histograms saw every message (the warm-up's 20 too) once.
    assert {name: count for name, (count, _, _) in histograms.items()} == {
        "flightstate_receive_to_commit_seconds": 220,
        "flightstate_commit_to_delivered_seconds": 220,
    }
    for _, p50, p99 in histograms.values():
        assert 0 < p50 <= p99
    assert set(cpu) == {"warm-up", "idle", "steady 50/s", "burst"}
    assert all(seconds > 0 for seconds in cpu.values())


def _phase(table: dict[str, Any], name: str, p50: float, p99: float) -> Any:
    sample = table["Percentiles"](10, p50, p99, p99, p99)
    return table["PhaseResult"](name, 10, 1.0, 10, sample, sample, 0, 0)


def test_across_runs_lists_each_run_with_the_median_and_range() -> None:
    table = _bench_module("latency_table")
    runs = [
        [_phase(table, "steady 50/s", 14.0, 20.0), _phase(table, "steady 1000/s", 90.0, 180.0)],
        [_phase(table, "steady 50/s", 16.0, 30.0), _phase(table, "steady 1000/s", 80.0, 300.0)],
        [_phase(table, "steady 50/s", 15.0, 25.0), _phase(table, "steady 1000/s", 85.0, 240.0)],
    ]
    lines = table["across_runs"](runs, [0.014, 0.021, 0.016])
    assert lines == [
        "across 3 runs, inbox commit -> schd consumed (ms), each run in order:",
        "  steady 50/s p50: median    15.0, range 14.0-16.0: 14.0 16.0 15.0",
        "  steady 50/s p99: median    25.0, range 20.0-30.0: 20.0 30.0 25.0",
        "  steady 1000/s p50: median    85.0, range 80.0-90.0: 90.0 80.0 85.0",
        "  steady 1000/s p99: median   240.0, range 180.0-300.0: 180.0 300.0 240.0",
        "  idle CPU, % of one core: median     1.6, range 1.4-2.1: 1.4 2.1 1.6",
    ]


def test_across_runs_says_when_a_run_saw_no_record_of_a_phase() -> None:
    table = _bench_module("latency_table")
    seen = _phase(table, "burst", 300.0, 400.0)
    unseen = table["PhaseResult"]("burst", 10, 0.0, 1, None, None, 10, 10)
    assert table["across_runs"]([[seen], [unseen]], []) == [
        "across 2 runs, inbox commit -> schd consumed (ms), each run in order:",
        "  burst: not every run saw a record",
    ]


def test_latency_bench_refuses_fewer_than_one_run() -> None:
    with pytest.raises(SystemExit):
        _bench_module("bench_latency")["parse_args"](["--repeat", "0"])


def test_bucket_quantile_is_the_upper_bound_of_the_bucket_holding_it() -> None:
    quantile = _bench_module("latency_table")["bucket_quantile"]
    buckets = [(0.01, 0.0), (0.05, 60.0), (0.1, 99.0), (float("inf"), 100.0)]
    assert (quantile(buckets, 0.5), quantile(buckets, 0.99), quantile(buckets, 1.0)) == (
        0.05,
        0.1,
        float("inf"),
    )


def test_log_bench_prints_both_ways_for_each_batch_size() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_logs.py"), "--batches", "1,3",
         "--rounds", "1"],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    header, *rows = result.stdout.strip().splitlines()
    assert header.split() == ["batch", "other", "thread", "per", "line", "µs", "held", "µs",
                              "ratio"]  # fmt: skip
    assert [row.split()[:2] for row in rows] == [["1", "none"], ["1", "busy"], ["3", "none"],
                                                  ["3", "busy"]]  # fmt: skip
    for row in rows:
        plain, held, ratio = (float(v) for v in row.split()[2:])
        assert plain > 0
        assert held > 0
        assert ratio == pytest.approx(plain / held, abs=0.01)

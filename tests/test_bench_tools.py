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

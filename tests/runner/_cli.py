"""Run ``examples/runner.py`` as a subprocess with a controlled environment."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RUNNER = REPO / "examples" / "runner.py"


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The current environment without any FLIGHTSTATE_* setting, plus *extra*."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLIGHTSTATE_")}
    env.pop("PYTHONPATH", None)  # the runner must find its own imports
    env.update(extra or {})
    return env


def runner_argv(*args: str) -> list[str]:
    """argv of one runner invocation."""
    return [sys.executable, str(RUNNER), *args]


def run_cli(
    *args: str, env: Mapping[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run the runner to completion; stdout/stderr captured as text."""
    return subprocess.run(
        runner_argv(*args), env=clean_env(env), capture_output=True, text=True,
        timeout=timeout, check=False, cwd=REPO,
    )  # fmt: skip


def wait_for_line(proc: subprocess.Popen[str], text: str, timeout: float) -> str:
    """Read *proc*'s stderr line by line until a line holds *text*; what was read.
    AssertionError with the tail when it exits or *timeout* s pass first."""
    seen = ""
    deadline = time.monotonic() + timeout
    assert proc.stderr is not None
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line and proc.poll() is not None:
            break
        seen += line
        if text in line:
            return seen
    raise AssertionError(f"{text!r} never appeared; stderr:\n{seen[-3000:]}")

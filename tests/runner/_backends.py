"""One store per backend for the runner's end-to-end tests, chosen by the DSN's scheme, and
the runner's commands invoked in this process (``memory://`` lives only in the process
that opened it, so its commands cannot run as subprocesses).

Oracle runs only with ``FLIGHTSTATE_TEST_ORACLE_DSN`` (and Oracle Client libraries,
``FLIGHTSTATE_ORACLE_CLIENT_DIR``); otherwise its cases are skipped with the reason, also
under ``FLIGHTSTATE_REQUIRE_SERVICES=1`` (no Oracle 11g runs on this machine or in CI).
"""

from __future__ import annotations

import gc
import json
import os
import signal
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

import click
import pytest
from attrs import frozen
from click.testing import CliRunner, Result

from flightstate_core.memory.backend import forget
from flightstate_core.ports import BackendSettings, StoreBackend
from flightstate_runner.backends import open_backend
from flightstate_runner.cli import _config, cli, command
from flightstate_runner.maintenance import register
from tests.fixtures.util import unique_name

BACKENDS = ["postgresql", "memory", "oracle"]
CLIENT_DIR_ENV = "FLIGHTSTATE_ORACLE_CLIENT_DIR"


def _full_cli() -> click.Group:
    """The CLI with the maintenance commands, as ``main`` builds it (once per process)."""
    if "history" not in cli.commands:
        register(cli, command, _config)
    return cli


@frozen
class StoreCase:
    """A store for one test: its kind, DSN, and the environment the runner gets."""

    kind: str
    dsn: str
    env: Mapping[str, str]

    def backend(self) -> StoreBackend:
        """The backend the runner would open (the same factory, by scheme)."""
        settings = BackendSettings(inbox_name=self.env["FLIGHTSTATE_INBOX_TABLE"])
        return open_backend(self.dsn, settings)

    def invoke(self, *args: str) -> Result:
        """One runner command in this process, with this store's settings."""
        runner = CliRunner(env={**self.env, "FLIGHTSTATE_LOG_LEVEL": "WARNING"})
        return runner.invoke(_full_cli(), ["--text-logs", *args], catch_exceptions=False)

    def ok(self, *args: str) -> str:
        """A command that must exit 0; its stdout."""
        result = self.invoke(*args)
        assert result.exit_code == 0, f"{args}: {result.output}"
        return result.stdout

    def status(self) -> dict[str, Any]:
        """``status --json``."""
        return json.loads(self.ok("status", "--json"))  # type: ignore[no-any-return]


def _oracle_env(request: pytest.FixtureRequest) -> dict[str, str]:
    dsn: str = request.getfixturevalue("oracle_dsn")  # skips (never fails) when unset
    if not os.environ.get(CLIENT_DIR_ENV):
        pytest.skip(f"{CLIENT_DIR_ENV} not set: Oracle 11g needs thick mode (Oracle Client)")
    mysql: str = request.getfixturevalue("mysql_dsn")  # the Oracle store's inbox is MySQL's
    return {"FLIGHTSTATE_STORE_DSN": dsn, "FLIGHTSTATE_MYSQL_DSN": mysql}


def _clean_oracle(case: StoreCase) -> None:
    """Empty the throw-away test schema (tests/oracle/conftest.py's statements) and the
    runner's heartbeat rows, so each test starts from nothing."""
    from tests.oracle.conftest import CLEAN  # noqa: PLC0415 - only with an Oracle

    backend = case.backend()
    try:
        backend.migrate()
        pool = backend.pool()  # type: ignore[attr-defined]
        with pool.acquire() as conn, conn.cursor() as cur:
            for statement in (*CLEAN, "DELETE FROM RUNNER_HEARTBEAT"):
                cur.execute(statement)
            conn.commit()
    finally:
        backend.close()


@pytest.fixture
def restored_process() -> Iterator[None]:
    """``run`` tunes the collector and installs signal handlers for its process: undone
    after the test, so the rest of the session runs as before."""
    thresholds = gc.get_threshold()
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)
    for sig, handler in handlers.items():
        signal.signal(sig, handler)


@pytest.fixture(params=BACKENDS)
def store_case(request: pytest.FixtureRequest, restored_process: None) -> Iterator[StoreCase]:
    """A fresh store of each backend, its inbox a table of its own (in the store itself,
    said explicitly; Oracle's is MySQL's)."""
    table = unique_name("fs_in")
    env = {"FLIGHTSTATE_INBOX_TABLE": table}
    kind = request.param
    if kind == "postgresql":
        env["FLIGHTSTATE_STORE_DSN"] = request.getfixturevalue("pg_db")
        env["FLIGHTSTATE_INBOX"] = "store"
    elif kind == "memory":
        env["FLIGHTSTATE_STORE_DSN"] = f"memory://{uuid.uuid4().hex}"
        env["FLIGHTSTATE_INBOX"] = "store"
    else:
        env.update(_oracle_env(request))
    case = StoreCase(kind, env["FLIGHTSTATE_STORE_DSN"], env)
    if kind == "oracle":
        _clean_oracle(case)
    yield case
    if kind == "memory":
        forget(case.dsn)

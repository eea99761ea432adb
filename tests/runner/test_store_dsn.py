"""``store_dsn`` chooses the store by its scheme; ``pg_dsn`` is its PostgreSQL alias; a store
that cannot be used is one line naming what is needed, never a traceback; a failure is
told as unreachable / refused / other by the backend, so the runner names no driver."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from flightstate_core.domain.errors import ConfigError, FlightstateError
from flightstate_core.memory.backend import forget
from flightstate_core.ports import BackendSettings, StoreFailure
from flightstate_pg.backend import open_backend as open_pg
from flightstate_runner.backends import module_for, scheme_of
from flightstate_runner.config import load_config
from flightstate_testing.names import url_with_database
from tests.runner._backends import StoreCase
from tests.runner._cli import run_cli

PG = "postgresql://flight@127.0.0.1:5432/db"
ORACLE = "oracle://flight:s3cr3t-pw@127.0.0.1:1/XE"  # a fake password: never printed


def test_the_alias_and_the_store_dsn_agree_or_the_setting_is_refused() -> None:
    assert load_config(None, {"FLIGHTSTATE_PG_DSN": PG}).store() == PG
    assert load_config(None, {"FLIGHTSTATE_STORE_DSN": PG}).store() == PG
    both = load_config(None, {"FLIGHTSTATE_STORE_DSN": PG, "FLIGHTSTATE_PG_DSN": PG})
    assert both.store() == PG
    assert load_config(None, {}).store() is None
    with pytest.raises(ConfigError, match=r"^store_dsn and pg_dsn: both set and different"):
        load_config(None, {"FLIGHTSTATE_STORE_DSN": "memory://x", "FLIGHTSTATE_PG_DSN": PG})
    with pytest.raises(ConfigError, match=r"^pg_dsn: not a postgresql:// URL"):
        load_config(None, {"FLIGHTSTATE_PG_DSN": ORACLE})
    described = load_config(None, {"FLIGHTSTATE_STORE_DSN": ORACLE}).describe()
    assert described["store_dsn"] == "oracle://flight:***@127.0.0.1:1/XE"


def test_a_conflict_is_exit_2_naming_both_settings() -> None:
    result = run_cli("status", env={"FLIGHTSTATE_STORE_DSN": "memory://x",
                                    "FLIGHTSTATE_PG_DSN": PG})  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        "configuration error: store_dsn and pg_dsn: both set and different (pg_dsn is the "
        "PostgreSQL alias of store_dsn: set one of them)"
    ]


@pytest.mark.parametrize(
    ("dsn", "scheme", "module"),
    [
        (PG, "postgresql", "flightstate_pg.backend"),
        ("postgres://u@h/db", "postgres", "flightstate_pg.backend"),
        ("host=h dbname=db", "postgresql", "flightstate_pg.backend"),
        (ORACLE, "oracle", "flightstate_oracle.backend"),
        ("memory://t", "memory", "flightstate_core.memory.backend"),
    ],
)
def test_the_scheme_names_the_backend_module(dsn: str, scheme: str, module: str) -> None:
    assert scheme_of(dsn) == scheme
    assert module_for(dsn, "store_dsn").__name__ == module


@pytest.mark.parametrize(
    ("dsn", "words"),
    [
        ("mysql://u@h/db", "store_dsn: scheme mysql:// is not one of"),
        ("oracle://nouser@h/XE", "store_dsn: needs user, password and host"),
        ("memory://x/y", "store_dsn: not memory:// nor memory://NAME"),
        ("notadsn", "store_dsn: not a postgresql:// URL nor a key=value conninfo"),
    ],
)
def test_a_malformed_store_dsn_is_exit_2_naming_the_setting(dsn: str, words: str) -> None:
    result = run_cli("status", env={"FLIGHTSTATE_STORE_DSN": dsn})
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"configuration error: {words}"), result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("command", [("status",), ("migrate",), ("run", "--until-idle")])
def test_oracle_without_its_client_is_one_line_and_exit_2(
    command: tuple[str, ...], tmp_path: Path
) -> None:
    """No Oracle Client where it is configured (a directory without one): one line naming
    the requirement, whatever the command; the DSN's password never shows."""
    env = {"FLIGHTSTATE_STORE_DSN": ORACLE, "FLIGHTSTATE_ORACLE_CLIENT_DIR": str(tmp_path),
           "FLIGHTSTATE_MYSQL_DSN": "mysql://aodb@127.0.0.1:1/aodb",  # Oracle's inbox
           "FLIGHTSTATE_LOG_LEVEL": "ERROR"}  # fmt: skip
    result = run_cli(*command, env=env, timeout=60)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("configuration error: store_dsn: oracle:// needs Oracle Client "
                               "19+ libraries"), lines[0]  # fmt: skip
    assert f"none loaded from {tmp_path}" in lines[0]
    assert "DPI-1047" in lines[0]
    assert "s3cr3t-pw" not in result.stderr + result.stdout


def _failure_of(dsn: str) -> StoreFailure:
    backend = open_pg(dsn, BackendSettings())
    with pytest.raises(FlightstateError) as raised:
        backend.schema_missing()
    return backend.failure(raised.value)


@pytest.mark.pg
def test_postgresql_failures_are_told_apart(pg_db: str) -> None:
    """A server that is not there, a login the server refuses (no such role, no such
    database), and a store that answers: the runner waits only for the first."""
    assert _failure_of("postgresql://postgres@127.0.0.1:1/x?connect_timeout=2") is (
        StoreFailure.UNREACHABLE)  # fmt: skip
    no_role = pg_db.replace("://postgres@", "://fs_no_such_role@", 1)
    assert no_role != pg_db
    assert _failure_of(no_role) is StoreFailure.REFUSED
    assert _failure_of(url_with_database(pg_db, "fs_no_such_db")) is StoreFailure.REFUSED
    assert open_pg(pg_db, BackendSettings()).schema_missing() == "flight_schd"


@pytest.mark.pg
def test_run_reports_a_refused_login_at_once(pg_db: str) -> None:
    """Refused is a setting to fix: ``run`` exits 2 with one line naming the setting, at
    once (an unreachable store is waited out instead: ``test_start_waits``)."""
    no_role = pg_db.replace("://postgres@", "://fs_no_such_role@", 1)
    result = run_cli(
        "run",
        "--until-idle",
        env={
            "FLIGHTSTATE_STORE_DSN": no_role,
            "FLIGHTSTATE_INBOX": "store",
            "FLIGHTSTATE_LOG_LEVEL": "ERROR",
        },
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("configuration error: store_dsn: the postgresql store refused")
    assert "fs_no_such_role" in lines[0]


def test_the_store_dsn_option_reaches_the_backend(restored_process: None) -> None:
    """``--store-dsn`` overrides the environment like every option (memory: in process)."""
    dsn = f"memory://{uuid.uuid4().hex}"
    case = StoreCase("memory", dsn, {"FLIGHTSTATE_INBOX_TABLE": "cminmsgs",
                                     "FLIGHTSTATE_INBOX": "store",
                                     "FLIGHTSTATE_STORE_DSN": "memory://elsewhere"})  # fmt: skip
    try:
        assert "ready" in case.ok("--store-dsn", dsn, "inbox-init")
        case.ok("--store-dsn", dsn, "generate", "--messages", "3", "--flights", "2")
        report = json.loads(case.ok("--store-dsn", dsn, "status", "--json"))
        assert (report["store"], report["inbox"]["lag"]) == ("memory", 3)
        assert json.loads(case.ok("status", "--json"))["inbox"]["lag"] == 0  # the env's store
    finally:
        forget(dsn)
        forget("memory://elsewhere")

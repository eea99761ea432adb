"""The runner's PostgreSQL sessions carry bounded waits; read-only and
idle-timeout errors are transient and their connections are not reused."""

from __future__ import annotations

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

from flightstate_core.domain.errors import ConfigError, TransientError
from flightstate_pg._errors import classify, translated
from flightstate_pg._pool import SimplePool
from flightstate_pg.session import SessionLimits, holder_application_name, with_session_limits

pytestmark = pytest.mark.pg


def test_every_limit_reaches_the_server(pg_dsn: str) -> None:
    limits = SessionLimits(lock_timeout=1.5, idle_in_transaction=4, statement_timeout=7,
                           keepalive_idle=8)  # fmt: skip
    dsn = with_session_limits(pg_dsn, limits, application_name="flightstate t1")
    with psycopg.connect(dsn) as conn:
        shown = {name: conn.execute(f"SHOW {name}").fetchone()[0]  # type: ignore[index]
                 for name in ("lock_timeout", "idle_in_transaction_session_timeout",
                              "statement_timeout", "application_name")}  # fmt: skip
    assert shown == {
        "lock_timeout": "1500ms",
        "idle_in_transaction_session_timeout": "4s",
        "statement_timeout": "7s",
        "application_name": "flightstate t1",
    }
    params = conninfo_to_dict(dsn)
    assert (params["keepalives"], params["keepalives_idle"], params["keepalives_count"]) == (
        "1",
        "8",
        "3",
    )


def test_a_long_holder_name_is_cut_never_its_instance(pg_dsn: str) -> None:
    """The lease finds an expired *instance's* sessions by application_name (63 bytes kept
    by the server): two instances of one long name must still differ there."""
    first, second = (holder_application_name("h" * 80 + "#" + str(n) * 12) for n in (1, 2))
    assert first.endswith("#111111111111")
    assert first != second
    assert len(first.encode()) == 63
    dsn = with_session_limits(pg_dsn, SessionLimits(), application_name=first)
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SHOW application_name").fetchone() == (first,)
    assert holder_application_name("pump-1") == "flightstate pump-1"  # no instance: as given


def test_options_in_the_dsn_win(pg_dsn: str) -> None:
    given = psycopg.conninfo.make_conninfo(pg_dsn, options="-c lock_timeout=250")
    with psycopg.connect(with_session_limits(given, SessionLimits())) as conn:
        assert conn.execute("SHOW lock_timeout").fetchone() == ("250ms",)


def test_zero_turns_a_limit_off_and_bad_values_are_refused() -> None:
    assert "-c lock_timeout=0" in SessionLimits(lock_timeout=0).server_options()
    assert SessionLimits(keepalive_idle=0).client_params() == {}
    for bad in (float("nan"), float("inf"), -1.0):
        with pytest.raises(ConfigError, match="lock_timeout"):
            SessionLimits(lock_timeout=bad)


def test_read_only_is_transient_and_the_session_is_dropped(pg_dsn: str) -> None:
    pool = SimplePool(pg_dsn)
    try:
        with pool.connection() as conn:
            conn.execute("SET default_transaction_read_only = on")
        with pytest.raises(TransientError, match="25006"), pool.connection() as same:
            _write_translated(same)
        assert same is conn
        assert conn.closed  # not given back to the pool
        with pool.connection() as fresh:
            assert fresh is not conn
            assert fresh.execute("SHOW default_transaction_read_only").fetchone() == ("off",)
    finally:
        pool.close()


def test_idle_in_transaction_timeout_ends_the_session_transiently(pg_dsn: str) -> None:
    dsn = with_session_limits(pg_dsn, SessionLimits(idle_in_transaction=0.2))
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("BEGIN")
        conn.execute("SELECT 1")
        with psycopg.connect(pg_dsn, autocommit=True) as other:  # waits server-side, no sleep
            other.execute("SELECT pg_sleep(0.6)")
        with pytest.raises(psycopg.Error) as caught:
            conn.execute("SELECT 1")
    assert isinstance(classify(caught.value), TransientError)


def _write_translated(conn: psycopg.Connection[object]) -> None:
    with translated():
        conn.execute("CREATE TEMP TABLE never_here (x int)")

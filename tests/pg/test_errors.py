# ruff: noqa: PT012 - the raises block is the transaction whose connection is killed
"""Driver errors become core errors at one choke point, on real server failures."""

from __future__ import annotations

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from flightstate_core.domain.errors import PermanentError, TransientError
from flightstate_core.testing.store_contract import flight, processed
from flightstate_pg import PgStore
from flightstate_pg._errors import classify

pytestmark = pytest.mark.pg


def test_terminated_backend_is_transient_and_the_store_recovers(fresh_pg: str) -> None:
    store = PgStore(fresh_pg)
    with pytest.raises(TransientError), store.transaction() as tx:
        tx.lock_pipeline(0)
        pid = tx._conn.info.backend_pid
        with psycopg.connect(fresh_pg, autocommit=True) as admin:
            assert admin.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone() == (True,)
        tx.save(processed(1, flight("15")))
    with store.transaction() as tx:  # the broken connection was dropped, not reused
        tx.lock_pipeline(0)
        assert tx.get_proc(1) is None
        tx.save(processed(1, flight("15")))
    assert store.get_flights(["15"]) == {"15": flight("15")}
    store.close()


def test_unreachable_server_is_transient() -> None:
    store = PgStore(make_conninfo("host=127.0.0.1 port=1 dbname=x user=postgres connect_timeout=2"))
    with pytest.raises(TransientError), store.transaction():
        pass
    with pytest.raises(TransientError):
        store.get_flights(["15"])


def test_lock_timeout_is_transient(fresh_pg: str) -> None:
    store = PgStore(make_conninfo(fresh_pg, options="-c lock_timeout=200"))
    with psycopg.connect(fresh_pg) as holder:
        holder.execute("SELECT 1 FROM PIPELINE_LOCK FOR UPDATE")
        with pytest.raises(TransientError, match="55P03"), store.transaction() as tx:
            tx.lock_pipeline(0)
    store.close()


def test_serialization_failure_is_transient(fresh_pg: str) -> None:
    with psycopg.connect(fresh_pg) as first, psycopg.connect(fresh_pg, autocommit=True) as other:
        first.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        first.execute("SELECT EPOCH FROM PIPELINE_LOCK").fetchone()
        other.execute("UPDATE PIPELINE_LOCK SET EPOCH = EPOCH + 1")
        with pytest.raises(psycopg.Error) as caught:
            first.execute("UPDATE PIPELINE_LOCK SET EPOCH = EPOCH + 1")
    assert caught.value.sqlstate == "40001"
    assert isinstance(classify(caught.value), TransientError)


def test_constraint_and_sql_errors_are_permanent(fresh_pg: str) -> None:
    with psycopg.connect(fresh_pg, autocommit=True) as conn:
        with pytest.raises(psycopg.Error) as caught:
            conn.execute("INSERT INTO PIPELINE_LOCK (LOCK_NAME) VALUES ('pipeline')")
        assert isinstance(classify(caught.value), PermanentError)
        with pytest.raises(psycopg.Error) as caught:
            conn.execute("SELECT 1 / 0")
        assert isinstance(classify(caught.value), PermanentError)


def test_a_transient_error_carries_its_sqlstate(fresh_pg: str) -> None:
    """The retry budget's DEAD reason names the SQLSTATE; a lost session is never counted
    (docs/design.md, "A retry budget for the head message")."""
    store = PgStore(make_conninfo(fresh_pg, options="-c lock_timeout=200"))
    with psycopg.connect(fresh_pg) as holder:
        holder.execute("SELECT 1 FROM PIPELINE_LOCK FOR UPDATE")
        with pytest.raises(TransientError) as caught, store.transaction() as tx:
            tx.lock_pipeline(0)
    assert (caught.value.code, caught.value.store_wide) == ("55P03", False)
    store.close()
    unreachable = PgStore(make_conninfo("host=127.0.0.1 port=1 dbname=x user=postgres"))
    with pytest.raises(TransientError) as lost:
        unreachable.get_flights(["15"])
    assert lost.value.code is None
    assert lost.value.store_wide is True


def test_ping_answers_while_the_server_does(fresh_pg: str) -> None:
    """The health probe: True on a live server, even while another session holds the
    locks a writer waits for; False when nothing listens (it never raises)."""
    store = PgStore(fresh_pg)
    with psycopg.connect(fresh_pg) as holder:
        holder.execute("SELECT 1 FROM PIPELINE_LOCK FOR UPDATE")
        assert store.ping() is True
    store.close()
    unreachable = PgStore(make_conninfo("host=127.0.0.1 port=1 dbname=x user=postgres"))
    assert unreachable.ping() is False


def test_ping_fails_while_a_table_every_message_writes_is_locked(fresh_pg: str) -> None:
    """A table lock (a long ALTER TABLE, a LOCK TABLE by hand) stops every message alike:
    the probe says the store is not healthy, so no head message spends its retry budget on
    it; a row lock on one flight (the stuck-message case) leaves it healthy."""
    store = PgStore(fresh_pg)
    try:
        for table in ("FLIGHT_SCHD", "FLIGHT_GATE", "MSG_EVENT", "PROC_STATE"):
            with psycopg.connect(fresh_pg) as holder:
                holder.execute(
                    sql.SQL("LOCK TABLE {} IN SHARE MODE").format(sql.Identifier(table.lower()))
                )
                assert store.ping() is False, table
            assert store.ping() is True, table
        with store.transaction() as tx:
            tx.lock_pipeline(0)
            tx.save(processed(1, flight("15")))
        with psycopg.connect(fresh_pg) as holder:
            holder.execute("SELECT 1 FROM FLIGHT_SCHD WHERE FLID = '15' FOR UPDATE")
            assert store.ping() is True
    finally:
        store.close()


def test_a_read_only_store_is_not_healthy_and_its_error_is_store_wide(fresh_pg: str) -> None:
    """A database that answers but takes no write (as a standby after a failover) is not
    healthy, and its 25006 is never counted against a message."""
    name = str(conninfo_to_dict(fresh_pg)["dbname"])
    with psycopg.connect(fresh_pg, autocommit=True) as admin:
        admin.execute(sql.SQL("ALTER DATABASE {} SET default_transaction_read_only = on")
                      .format(sql.Identifier(name)))  # fmt: skip
    store = PgStore(fresh_pg)
    try:
        assert store.ping() is False
        with pytest.raises(TransientError) as caught, store.transaction() as tx:
            tx.lock_pipeline(0)
            tx.save(processed(1, flight("15")))
        assert (caught.value.code, caught.value.store_wide) == ("25006", True)
    finally:
        store.close()
        writable = make_conninfo(fresh_pg, options="-c default_transaction_read_only=off")
        with psycopg.connect(writable, autocommit=True) as admin:
            admin.execute(sql.SQL("ALTER DATABASE {} RESET default_transaction_read_only")
                          .format(sql.Identifier(name)))  # fmt: skip

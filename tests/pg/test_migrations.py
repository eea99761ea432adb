# ruff: noqa: PT018 - compound asserts on one fetched row read better together
"""Migrations: the schema matches layout.py, upgrades keep every row, the view and history."""

from __future__ import annotations

from typing import Any

import attrs
import psycopg
import pytest
from psycopg.rows import dict_row
from yoyo import get_backend, read_migrations

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.layout import (
    DETAIL_TABLES,
    DOCUMENT_COLUMNS,
    MAIN_FIXED_COLUMNS,
    MAIN_TABLE,
    SCALAR_COLUMNS,
)
from flightstate_core.domain.wire import wire
from flightstate_core.testing.store_contract import flight, full_collections, processed
from flightstate_pg import PgStore, migrate
from flightstate_pg.migrate import MIGRATIONS_DIR, applied_migrations, yoyo_url
from tests.fixtures import postgres

pytestmark = pytest.mark.pg

_ORIGINAL_TABLES = (MAIN_TABLE, *DETAIL_TABLES, "PROC_STATE", "MSG_EVENT", "INBOX_CURSOR",
                    "SCHD_SNAP_LOG", "PIPELINE_LOCK")  # fmt: skip


def _columns(conn: psycopg.Connection[Any], table: str) -> list[str]:
    rows = conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = %s "
        "ORDER BY ordinal_position", (table.lower(),),
    ).fetchall()  # fmt: skip
    return [row[0].upper() for row in rows]


def _contents(dsn: str) -> dict[str, list[dict[str, Any]]]:
    with psycopg.connect(dsn, row_factory=dict_row) as conn:
        return {
            table: conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
            for table in _ORIGINAL_TABLES
        }


def _as_before(
    after: dict[str, list[dict[str, Any]]], before: dict[str, list[dict[str, Any]]]
) -> dict[str, list[dict[str, Any]]]:
    """*after* restricted to the columns *before* had: a migration may add columns (with
    defaults), never change or lose a value."""
    kept: dict[str, list[dict[str, Any]]] = {}
    for table, rows_before in before.items():
        columns = list(rows_before[0]) if rows_before else []
        kept[table] = [{k: row[k] for k in columns} if columns else row for row in after[table]]
    return kept


def test_schema_matches_layout(fresh_pg: str) -> None:
    with psycopg.connect(fresh_pg) as conn:
        main = _columns(conn, MAIN_TABLE)
        for name in (*MAIN_FIXED_COLUMNS, *DOCUMENT_COLUMNS):
            assert name in main
        for column in SCALAR_COLUMNS:
            assert column.code in main
            assert column.typed is None or column.typed in main
        for table in DETAIL_TABLES.values():
            cols = _columns(conn, table.name)
            assert cols[: len(table.key_columns) + 1] == [*table.key_columns, "SOURCE_SEQ"]
            for child in table.children:
                assert child.code in cols and (child.typed is None or child.typed in cols)
            hist = _columns(conn, f"{table.name}_HIST")
            assert hist == [*cols, "ARCHIVED_AT"]
        # Every main column is archived; PROVENANCE (0009) came after ARCHIVED_AT (0002).
        hist = _columns(conn, "FLIGHT_SCHD_HIST")
        assert [name for name in hist if name != "ARCHIVED_AT"] == main
        assert hist[main.index("PROVENANCE")] == "ARCHIVED_AT"
        seed = conn.execute("SELECT EPOCH FROM PIPELINE_LOCK WHERE LOCK_NAME = 'pipeline'")
        assert seed.fetchone() == (0,)


def _all_ids() -> list[str]:
    return [m.id for m in read_migrations(str(MIGRATIONS_DIR))]


def test_upgrade_from_each_version_keeps_every_row(empty_pg: tuple[str, str]) -> None:
    admin, _ = empty_pg
    ids = _all_ids()
    assert len(ids) >= 2
    for position, version in enumerate(ids[:-1]):
        dsn = postgres.create_database(admin)
        try:
            assert migrate(dsn, target=version) == ids[: position + 1]
            _fill_and_upgrade(dsn, expected=ids[position + 1 :])
        finally:
            postgres.drop_database(admin, dsn)


def _fill_and_upgrade(dsn: str, expected: list[str]) -> None:
    store = PgStore(dsn)
    states = [flight(f"F{n}", collections=full_collections(3, tag="旧")) for n in range(5)]
    # Today's writer names PROVENANCE (0009); before 0009 the column is lent for the save
    # and dropped again, so the rows are those an older pump wrote.
    with psycopg.connect(dsn, autocommit=True) as conn:
        lent = "PROVENANCE" not in _columns(conn, MAIN_TABLE)
        if lent:
            conn.execute("ALTER TABLE FLIGHT_SCHD ADD COLUMN PROVENANCE text")
    with store.transaction() as tx:
        tx.lock_pipeline(0)
        tx.load_flights([s.flid for s in states])
        tx.save(processed(1, *states))
    if lent:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("ALTER TABLE FLIGHT_SCHD DROP COLUMN PROVENANCE")
    before = _contents(dsn)
    store.close()
    assert migrate(dsn) == expected
    assert applied_migrations(dsn) == _all_ids()
    assert _as_before(_contents(dsn), before) == before
    store = PgStore(dsn)
    assert store.get_flights([s.flid for s in states]) == {s.flid: s for s in states}
    store.close()
    assert migrate(dsn) == []  # idempotent


def test_display_view_and_typed_columns(fresh_pg: str) -> None:
    store = PgStore(fresh_pg)
    collections = full_collections(3)
    state = flight("15", collections=collections)
    with store.transaction() as tx:
        tx.lock_pipeline(0)
        tx.save(processed(1, state, flight("16", collections={})))
    store.close()
    with psycopg.connect(fresh_pg) as conn:
        row = _one(conn, "SELECT GATE_1, GATE_2, GATE_COUNT, COUNTER_1, COUNTER_COUNT, "
                         "BELT_2, BELT_COUNT, SODT_TS FROM FLIGHT_SCHD_DISPLAY "
                         "WHERE FLID = '15'")  # fmt: skip
        empty = _one(conn, "SELECT GATE_1, GATE_COUNT FROM FLIGHT_SCHD_DISPLAY WHERE FLID = '16'")
        typed = _one(conn, "SELECT PGOT_TS FROM FLIGHT_GATE WHERE FLID = '15' AND ORDINAL = 3")
    gates = [dict(i.values)["GATE"] for i in collections["GTDT"]]
    assert row[:3] == (gates[0], gates[1], 3)
    assert row[3] == dict(collections["CKDT"][0].values)["CHKC"] and row[4] == 3
    assert row[6] == 3 and row[7].isoformat() == "2021-01-22T21:35:00+00:00"
    assert empty == (None, 0)
    assert typed[0].isoformat() == "2021-01-22T21:35:00+00:00"


def _one(conn: psycopg.Connection[Any], query: str) -> tuple[Any, ...]:
    row = conn.execute(query).fetchone()
    assert row is not None, query
    return tuple(row)


def _write_path_settings(dsn: str) -> tuple[bool, str | None, str]:
    """(MSG_EVENT_UNDISPATCHED_IX exists, FLIGHT_SCHD reloptions, PAYLOAD compression)."""
    with psycopg.connect(dsn) as conn:
        index = _one(conn, "SELECT count(*) FROM pg_indexes "
                           "WHERE indexname = 'msg_event_undispatched_ix'")  # fmt: skip
        options = _one(conn, "SELECT array_to_string(reloptions, ',') FROM pg_class "
                             "WHERE relname = 'flight_schd'")  # fmt: skip
        compression = _one(conn, "SELECT attcompression FROM pg_attribute "
                                 "WHERE attrelid = 'msg_event'::regclass "
                                 "AND attname = 'payload'")  # fmt: skip
    return index[0] == 1, options[0], str(compression[0])


def _server_has_lz4(dsn: str) -> bool:
    with psycopg.connect(dsn) as conn:
        try:
            conn.execute("SET default_toast_compression = 'lz4'")
        except psycopg.Error:
            return False
    return True


def test_write_path_migration_and_its_rollback(fresh_pg: str) -> None:
    lz4 = _server_has_lz4(fresh_pg)
    assert _write_path_settings(fresh_pg) == (False, "fillfactor=80", "l" if lz4 else "")
    store = PgStore(fresh_pg)
    big = flight("FBIG", collections=full_collections(40, tag="长"))
    message = processed(1, big)
    snapshot = wire(big, CoreConfig())  # the real payload: several KB, so it is compressed
    events = tuple(attrs.evolve(e, payload=snapshot) if e.topic == "schd" else e
                   for e in message.events)  # fmt: skip
    with store.transaction() as tx:
        tx.lock_pipeline(0)
        tx.save(attrs.evolve(message, events=events))
    store.close()
    with psycopg.connect(fresh_pg) as conn:
        methods = conn.execute(
            "SELECT DISTINCT pg_column_compression(PAYLOAD) FROM MSG_EVENT WHERE TOPIC = 'schd'"
        ).fetchall()
    assert methods == [("lz4" if lz4 else "pglz",)]

    backend = get_backend(yoyo_url(fresh_pg))
    try:
        migrations = read_migrations(str(MIGRATIONS_DIR))
        with backend.lock():
            backend.rollback_migrations(migrations.filter(lambda m: m.id == "0006_write_path"))
    finally:
        backend.connection.close()
    assert _write_path_settings(fresh_pg) == (True, None, "")
    assert migrate(fresh_pg) == ["0006_write_path"]


def test_every_migration_has_a_rollback_file() -> None:
    forward = sorted(p.name for p in MIGRATIONS_DIR.glob("*.sql") if ".rollback." not in p.name)
    missing = [n for n in forward if not (MIGRATIONS_DIR / n.replace(".sql", ".rollback.sql"))
               .is_file()]  # fmt: skip
    assert forward and missing == []


def _schema_objects(dsn: str) -> list[tuple[str, str]]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT c.relkind::text, c.relname FROM pg_class c JOIN pg_namespace n "
            "ON n.oid = c.relnamespace WHERE n.nspname = 'public' "
            "AND c.relname NOT LIKE '%yoyo%' ORDER BY 2"
        ).fetchall()
    return [(kind, name) for kind, name in rows]


def test_rolling_back_every_migration_leaves_an_empty_schema(fresh_pg: str) -> None:
    """Down from the latest version to nothing (on a database with data), then up again."""
    migrated = _schema_objects(fresh_pg)
    store = PgStore(fresh_pg)
    with store.transaction() as tx:
        tx.lock_pipeline(0)
        tx.save(processed(1, flight("FDOWN", collections=full_collections(2, tag="回"))))
    store.close()
    backend = get_backend(yoyo_url(fresh_pg))
    try:
        migrations = read_migrations(str(MIGRATIONS_DIR))
        with backend.lock():
            backend.rollback_migrations(backend.to_rollback(migrations))
    finally:
        backend.connection.close()
    assert applied_migrations(fresh_pg) == []
    assert _schema_objects(fresh_pg) == []
    assert migrate(fresh_pg) == [m.id for m in read_migrations(str(MIGRATIONS_DIR))]
    assert _schema_objects(fresh_pg) == migrated

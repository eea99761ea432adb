"""Renamed migration ids (docs/design.md, "Migrations"), on real PostgreSQL.

A database is migrated from a copy of today's files under the old ``NNNN.name`` scheme (the
scheme Oracle's files had), so yoyo records the old ids. Then the same step ``migrate`` runs
(``apply_pending``: adopt renamed ids, apply what is pending) sees today's files with the
old -> new table: nothing may run again, and ``migrate`` afterwards has nothing to do.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import psycopg
import pytest
from yoyo import get_backend, read_migrations

from flightstate_core.support.migrations import apply_pending
from flightstate_pg import migrate
from flightstate_pg.migrate import MIGRATIONS_DIR, applied_migrations, yoyo_url
from tests.fixtures import postgres

pytestmark = pytest.mark.pg


def _new_ids() -> list[str]:
    return [m.id for m in read_migrations(str(MIGRATIONS_DIR))]


def _old_id(new_id: str) -> str:
    number, _, name = new_id.partition("_")
    return f"{number}.{name}"


RENAMED = {_old_id(new): new for new in _new_ids()}


def _old_named_copy(directory: Path) -> Path:
    """Today's migration files (and their rollbacks) under their old ids."""
    for path in MIGRATIONS_DIR.glob("*.sql"):
        stem, _, rest = path.name.partition(".")
        shutil.copyfile(path, directory / f"{_old_id(stem)}.{rest}")
    return directory


def _apply(
    dsn: str, directory: Path, renamed: Mapping[str, str], target: str | None = None
) -> list[str]:
    backend = get_backend(yoyo_url(dsn))
    try:
        return apply_pending(backend, read_migrations(str(directory)), renamed, target)
    finally:
        backend.connection.close()


def _fetch(dsn: str, query: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn) as conn:
        return conn.execute(query).fetchall()  # type: ignore[arg-type]


def _recorded(dsn: str) -> list[str]:
    rows = _fetch(dsn, 'SELECT migration_id FROM "_yoyo_migration" ORDER BY applied_at_utc')
    return [row[0] for row in rows]


def _applies(dsn: str) -> int:
    return int(_fetch(dsn, "SELECT count(*) FROM _yoyo_log WHERE operation = 'apply'")[0][0])


def _schema(dsn: str) -> list[tuple[Any, ...]]:
    """Every column of the public schema but yoyo's own tables."""
    return _fetch(
        dsn,
        "SELECT table_name, column_name, data_type, column_default, is_nullable "
        "FROM information_schema.columns WHERE table_schema = 'public' "
        "AND table_name NOT LIKE '%yoyo%' AND table_name <> 'marker' ORDER BY 1, 2",
    )


def test_old_ids_are_renamed_and_nothing_runs_again(
    empty_pg: tuple[str, str], tmp_path: Path
) -> None:
    admin, dsn = empty_pg
    old = _old_named_copy(tmp_path)
    assert _apply(dsn, old, {}) == list(RENAMED)
    assert _recorded(dsn) == list(RENAMED)
    with psycopg.connect(dsn) as conn:  # a migration run again would fail or lose these
        conn.execute("CREATE TABLE marker (note text)")
        conn.execute("INSERT INTO marker VALUES ('kept')")
        conn.execute("UPDATE PIPELINE_LOCK SET EPOCH = 41")
    applies = _applies(dsn)

    assert _apply(dsn, MIGRATIONS_DIR, RENAMED) == []
    assert _recorded(dsn) == _new_ids()
    assert applied_migrations(dsn) == _new_ids()
    assert _applies(dsn) == applies
    assert _fetch(dsn, "SELECT note FROM marker") == [("kept",)]
    assert _fetch(dsn, "SELECT EPOCH FROM PIPELINE_LOCK") == [(41,)]
    assert _apply(dsn, MIGRATIONS_DIR, RENAMED) == []  # the rename is idempotent
    assert migrate(dsn) == []
    assert _recorded(dsn) == _new_ids()

    reference = postgres.create_database(admin)
    try:
        migrate(reference)
        assert _schema(dsn) == _schema(reference)
    finally:
        postgres.drop_database(admin, reference)


def test_a_partly_migrated_database_applies_only_the_rest(
    empty_pg: tuple[str, str], tmp_path: Path
) -> None:
    _, dsn = empty_pg
    old_ids = list(RENAMED)
    assert _apply(dsn, _old_named_copy(tmp_path), {}, target=old_ids[3]) == old_ids[:4]
    applies = _applies(dsn)
    assert _apply(dsn, MIGRATIONS_DIR, RENAMED) == _new_ids()[4:]
    assert _recorded(dsn) == _new_ids()
    assert _applies(dsn) == applies + len(_new_ids()) - 4
    assert migrate(dsn) == []

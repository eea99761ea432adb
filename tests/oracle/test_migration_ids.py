"""Oracle's renamed migration ids, checked without a server (docs/design.md, "Migrations").

The rename itself (``flightstate_core.support.migrations.adopt_renamed``) runs on real
PostgreSQL in ``tests/pg/test_migration_ids.py``; here: the old -> new table names exactly
the files that shipped and the files there are now, every new id is its PostgreSQL twin's,
and the statement, formatted as yoyo's Oracle backend formats it, parses as Oracle and passes
the 11g lint.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from yoyo import read_migrations
from yoyo.migrations import default_migration_table, get_migration_hash

from flightstate_core.support.migrations import RENAME_RECORDED, id_hash, renamed_params
from flightstate_oracle._lint import lint
from flightstate_oracle.migrate import MIGRATIONS_DIR, RENAMED
from flightstate_pg.migrate import MIGRATIONS_DIR as PG_MIGRATIONS_DIR

#: The ids Oracle's migrations shipped with (file stems before the rename).
SHIPPED = [
    "0001.initial",
    "0002.history_display",
    "0003.lifecycle_requests",
    "0004.outbox_watermark",
    "0005.inbox_gaps",
    "0006.outbox_parked",
    "0007.provenance",
]


#: Migrations added after the rename, under their PostgreSQL twin's id from the start.
ADDED = ["0005_runner_tables"]


def _ids(directory: object) -> list[str]:
    return [m.id for m in read_migrations(str(directory))]


def test_every_shipped_id_maps_to_one_file_of_today() -> None:
    assert list(RENAMED) == SHIPPED
    assert sorted([*RENAMED.values(), *ADDED]) == _ids(MIGRATIONS_DIR)
    on_disk = {path.name.split(".")[0] for path in MIGRATIONS_DIR.glob("*.sql")}
    assert not on_disk & set(SHIPPED)


def test_new_ids_are_the_postgresql_twins_ids() -> None:
    assert set(_ids(MIGRATIONS_DIR)) <= set(_ids(PG_MIGRATIONS_DIR))


def test_each_migration_has_its_rollback_under_the_same_id() -> None:
    forward = {p.stem for p in MIGRATIONS_DIR.glob("*.sql") if ".rollback." not in p.name}
    rollback = {p.name.removesuffix(".rollback.sql") for p in MIGRATIONS_DIR.glob("*.rollback.sql")}
    assert forward == rollback == {*RENAMED.values(), *ADDED}


def test_depends_name_new_ids_only() -> None:
    for migration in read_migrations(str(MIGRATIONS_DIR)):
        assert {d.id for d in migration.depends} <= {*RENAMED.values(), *ADDED}, migration.id


def test_binds_carry_yoyos_hashes() -> None:
    params = renamed_params(RENAMED)
    assert [p["new_id"] for p in params] == list(RENAMED.values())
    for (old, new), p in zip(RENAMED.items(), params, strict=True):
        assert p["old_hash"] == get_migration_hash(old) == id_hash(old)
        assert p["new_hash"] == get_migration_hash(new)


def test_the_rename_statement_is_oracle() -> None:
    table = f'"{default_migration_table}"'  # yoyo's quote_identifier
    text = RENAME_RECORDED.format(table=table)
    parsed = sqlglot.parse(text, read="oracle")
    assert len(parsed) == 1
    assert isinstance(parsed[0], exp.Update)
    assert lint(text) == []
    assert sorted(p.name for p in parsed[0].find_all(exp.Placeholder)) == [
        "new_hash",
        "new_hash",
        "new_id",
        "old_hash",
    ]

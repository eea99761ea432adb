"""Oracle's migration ids and steps, checked without a server (docs/design.md, "Migrations").

The old -> new map names exactly the files that shipped and the files there are now, every
new id is its PostgreSQL twin's, and every step is paired with its exact undo (the undo of a
CREATE drops that object, the undo of an ADD drops what it added). Adopting a schema yoyo
recorded under the old ids runs in ``test_boundary_migrate``.
"""

from __future__ import annotations

import re

import pytest
from yoyo import read_migrations

from flightstate_oracle._steps import (
    MIGRATIONS_DIR,
    ObjectKind,
    StepFormatError,
    load_migrations,
    parse_migration,
)
from flightstate_oracle.migrate import RENAMED
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
STEPS = [(m.id, s) for m in load_migrations() for s in m.steps]


def test_every_shipped_id_maps_to_one_file_of_today() -> None:
    assert list(RENAMED) == SHIPPED
    # 0005 came after the rename, under its PostgreSQL twin's id from the start.
    assert sorted([*RENAMED.values(), "0005_runner_tables"]) == [m.id for m in load_migrations()]
    on_disk = {path.name.split(".")[0] for path in MIGRATIONS_DIR.glob("*")}
    assert not on_disk & set(SHIPPED)
    assert not list(MIGRATIONS_DIR.glob("*.rollback.sql"))  # undo sits beside each step


def test_new_ids_are_the_postgresql_twins_ids() -> None:
    pg_ids = {m.id for m in read_migrations(str(PG_MIGRATIONS_DIR))}
    assert {m.id for m in load_migrations()} <= pg_ids


_INVERSE = {
    (ObjectKind.TABLE, True): r"DROP TABLE {} CASCADE CONSTRAINTS PURGE",
    (ObjectKind.INDEX, True): r"DROP INDEX {}",
    (ObjectKind.SEQUENCE, True): r"DROP SEQUENCE {}",
    (ObjectKind.VIEW, True): r"DROP VIEW {}",
    (ObjectKind.CONSTRAINT, True): r"ALTER TABLE \w+ DROP CONSTRAINT {}",
    (ObjectKind.CONSTRAINT, False): r"ALTER TABLE \w+ ADD CONSTRAINT {} CHECK \(.*\)",
}


@pytest.mark.parametrize(("migration", "step"), STEPS, ids=[f"{m}#{s.number}" for m, s in STEPS])
def test_each_step_is_paired_with_its_exact_undo(migration: str, step: object) -> None:
    apply, undo = step.apply_check, step.undo_check  # type: ignore[attr-defined]
    if apply is None or apply.kind is ObjectKind.DATA or undo is None:
        assert undo is not None, migration
        assert undo.kind is ObjectKind.DATA, migration  # a data step only
        return
    assert (undo.kind, undo.name, undo.present) == (apply.kind, apply.name, not apply.present)
    if apply.kind is ObjectKind.COLUMN:
        table, column = apply.name.split(".")
        assert step.undo == f"ALTER TABLE {table} DROP COLUMN {column}"  # type: ignore[attr-defined]
        return
    pattern = _INVERSE[(apply.kind, apply.present)].format(apply.name)
    assert re.fullmatch(pattern, step.undo), (migration, step.undo)  # type: ignore[attr-defined]


def test_the_0003_check_is_narrowed_only_after_its_rows_are_gone() -> None:
    steps = next(m for m in load_migrations() if m.id == "0003_lifecycle_requests").steps
    undo_order = [s.undo for s in reversed(steps)]
    delete = undo_order.index("DELETE FROM MSG_EVENT WHERE KIND = 'REPUBLISH'")
    narrowed = next(i for i, t in enumerate(undo_order) if t and "'NOTIFY'))" in t)
    assert delete < narrowed


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("-- step\nCREATE TABLE T (A NUMBER(1));\nDROP TABLE T;\n", "exactly one statement"),
        ("-- step\nALTER TABLE T ADD (A NUMBER(1), B NUMBER(1));\n", "no done-check"),
        ("-- step\nINSERT INTO T (A) VALUES (1);\n", "NOT EXISTS"),
        ("-- undo\nDROP TABLE T;\n", "without its"),
        ("-- depends: 0001_core\n", "no steps"),
        ("-- step\n-- undo\n", "empty"),
    ],
)
def test_the_loader_refuses_what_the_runner_could_not_rerun(text: str, problem: str) -> None:
    with pytest.raises(StepFormatError, match=problem):
        parse_migration("0099_probe", text)

"""Oracle migrations as steps: one statement each, its exact undo, and how to tell it is done.

Why steps (flightstate_oracle/README.md, "Migrations"): Oracle commits every DDL statement as
it runs, so a migration stopped half-way is a real state of the schema, and ``CREATE`` run a
second time fails (ORA-00955, ORA-01430). So each statement is its own step, paired in the
file with the statement that undoes it, and before a step runs the runner asks the data
dictionary whether its effect is already there (``Check``): a re-run after any stop skips
what was done and completes the rest. Data steps (INSERT/UPDATE/DELETE/MERGE) commit with
themselves and are written so that running them twice changes nothing (an INSERT carries
``WHERE NOT EXISTS``); the loader refuses an INSERT without it.

File format (``migrations/NNNN_name.sql``): header comments with ``-- depends: <id>``, then
blocks::

    -- step
    CREATE INDEX X_IX ON T (A);
    -- undo
    DROP INDEX X_IX;

A block may have an empty ``-- step`` part: a data step that exists only on the way back
(e.g. deleting rows a narrower CHECK constraint would refuse before it is re-added).
Full-line comments inside a block document it and are not sent.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import Enum
from functools import cache
from pathlib import Path
from typing import Final

import sqlparse
from attrs import frozen

__all__ = [
    "MIGRATIONS_DIR",
    "Check",
    "Migration",
    "ObjectKind",
    "Step",
    "StepFormatError",
    "check_for",
    "load_migrations",
    "parse_migration",
]

MIGRATIONS_DIR: Final = Path(__file__).with_name("migrations")
_ID: Final = re.compile(r"^\d{4}_[a-z0-9_]+$")
_DEPENDS: Final = re.compile(r"^--\s*depends:\s*(.*)$")


class StepFormatError(ValueError):
    """A migration file that does not follow the step format (names file and block)."""


class ObjectKind(Enum):
    """What a done-check looks up, and in which dictionary view."""

    TABLE = "USER_TABLES"
    INDEX = "USER_INDEXES"
    SEQUENCE = "USER_SEQUENCES"
    VIEW = "USER_VIEWS"
    CONSTRAINT = "USER_CONSTRAINTS"
    COLUMN = "USER_TAB_COLUMNS"
    DATA = "(none)"  # a data statement: idempotent by its text, always run


@frozen
class Check:
    """A step is done when ``name`` (``TABLE.COLUMN`` for a column) exists == ``present``."""

    kind: ObjectKind
    name: str
    present: bool


_DDL: Final = (
    (re.compile(r"^CREATE\s+TABLE\s+(\w+)", re.I), ObjectKind.TABLE, True),
    (re.compile(r"^CREATE\s+(?:UNIQUE\s+)?INDEX\s+(\w+)", re.I), ObjectKind.INDEX, True),
    (re.compile(r"^CREATE\s+SEQUENCE\s+(\w+)", re.I), ObjectKind.SEQUENCE, True),
    (re.compile(r"^CREATE\s+VIEW\s+(\w+)", re.I), ObjectKind.VIEW, True),
    (re.compile(r"^DROP\s+TABLE\s+(\w+)", re.I), ObjectKind.TABLE, False),
    (re.compile(r"^DROP\s+INDEX\s+(\w+)", re.I), ObjectKind.INDEX, False),
    (re.compile(r"^DROP\s+SEQUENCE\s+(\w+)", re.I), ObjectKind.SEQUENCE, False),
    (re.compile(r"^DROP\s+VIEW\s+(\w+)", re.I), ObjectKind.VIEW, False),
    (re.compile(r"^ALTER\s+TABLE\s+\w+\s+ADD\s+CONSTRAINT\s+(\w+)", re.I),
     ObjectKind.CONSTRAINT, True),
    (re.compile(r"^ALTER\s+TABLE\s+\w+\s+DROP\s+CONSTRAINT\s+(\w+)", re.I),
     ObjectKind.CONSTRAINT, False),
)  # fmt: skip
_ADD_COLUMN: Final = re.compile(r"^ALTER\s+TABLE\s+(\w+)\s+ADD\s+\(\s*(\w+)\s[^,]*\)$", re.I | re.S)
_DROP_COLUMN: Final = re.compile(r"^ALTER\s+TABLE\s+(\w+)\s+DROP\s+COLUMN\s+(\w+)$", re.I)
_DATA: Final = re.compile(r"^(INSERT|UPDATE|DELETE|MERGE)\b", re.I)


def check_for(statement: str) -> Check:
    """The done-check of one step statement; ``StepFormatError`` for a statement kind the
    runner cannot check (a multi-column ADD must be split into one step per column)."""
    text = statement.strip()
    for pattern, kind, present in _DDL:
        found = pattern.match(text)
        if found:
            return Check(kind, found.group(1).upper(), present)
    for pattern, present in ((_ADD_COLUMN, True), (_DROP_COLUMN, False)):
        found = pattern.match(text)
        if found:
            name = f"{found.group(1)}.{found.group(2)}".upper()
            return Check(ObjectKind.COLUMN, name, present)
    data = _DATA.match(text)
    if data:
        if data.group(1).upper() == "INSERT" and "NOT EXISTS" not in text.upper():
            raise StepFormatError(f"INSERT without WHERE NOT EXISTS runs twice: {text[:80]}")
        return Check(ObjectKind.DATA, "", True)
    raise StepFormatError(f"no done-check for this statement: {text[:80]}")


@frozen
class Step:
    """One statement (None: nothing on the way forward), its undo, and their checks."""

    number: int
    apply: str | None
    undo: str | None

    @property
    def apply_check(self) -> Check | None:
        return None if self.apply is None else check_for(self.apply)

    @property
    def undo_check(self) -> Check | None:
        return None if self.undo is None else check_for(self.undo)


@frozen
class Migration:
    """A migration: its id (``NNNN_name``), what it depends on, and its steps in order."""

    id: str
    depends: tuple[str, ...]
    steps: tuple[Step, ...]


def _statement(lines: Sequence[str], where: str) -> str | None:
    body = "\n".join(line for line in lines if not line.lstrip().startswith("--")).strip()
    if not body:
        return None
    parts = [part for part in sqlparse.split(body) if part.strip()]
    if len(parts) != 1 or not body.endswith(";"):
        raise StepFormatError(f"{where}: expected exactly one statement ending in ';'")
    text = body[:-1].rstrip()  # the driver is sent no terminator (ORA-00911)
    check_for(text)  # refuse a statement the runner could not check, at load time
    return text


def parse_migration(migration_id: str, source: str) -> Migration:
    """Parse one migration file's text (``StepFormatError`` naming the block on error)."""
    if not _ID.match(migration_id):
        raise StepFormatError(f"{migration_id}: migration ids are NNNN_name")
    depends: list[str] = []
    blocks: list[dict[str, list[str]]] = []
    part = "header"
    for line in source.splitlines():
        marker = line.strip().lower()
        if marker in ("-- step", "-- undo"):
            if marker == "-- step":
                blocks.append({"step": [], "undo": []})
            elif not blocks or part != "step":
                raise StepFormatError(f"{migration_id}: '-- undo' without its '-- step'")
            part = marker[3:]
            continue
        if part == "header":
            found = _DEPENDS.match(line.strip())
            depends += found.group(1).split() if found else []
        else:
            blocks[-1][part].append(line)
    steps = []
    for number, block in enumerate(blocks, 1):
        where = f"{migration_id} step {number}"
        apply, undo = _statement(block["step"], where), _statement(block["undo"], where)
        if apply is None and undo is None:
            raise StepFormatError(f"{where}: empty")
        steps.append(Step(number, apply, undo))
    if not steps:
        raise StepFormatError(f"{migration_id}: no steps")
    return Migration(migration_id, tuple(depends), tuple(steps))


@cache
def load_migrations(directory: Path = MIGRATIONS_DIR) -> tuple[Migration, ...]:
    """Every migration of ``directory`` in id order; each depends only on earlier ones."""
    found = tuple(
        parse_migration(path.stem, path.read_text(encoding="utf-8"))
        for path in sorted(directory.glob("*.sql"))
    )
    seen: set[str] = set()
    for migration in found:
        unknown = set(migration.depends) - seen
        if unknown:
            raise StepFormatError(f"{migration.id}: depends on later or unknown {sorted(unknown)}")
        seen.add(migration.id)
    return found

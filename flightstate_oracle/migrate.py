"""Schema migrations on Oracle 11.2: a small runner of re-runnable steps (not yoyo).

Why not yoyo on Oracle (read in yoyo 9.0's source; flightstate_pg keeps using it):

- its bookkeeping cannot be created: internal schema v1 (``internalmigrations/v1.py``)
  creates ``"_yoyo_migration"`` with unquoted ``id``/``ctime`` (stored as ID, CTIME), and v2
  selects ``"id", "ctime"`` quoted (ORA-00904); a re-run then asserts on the half-made
  version table. Every Oracle ``migrate`` stopped there;
- it runs each step's text through ``cursor().execute`` itself (``MigrationStep.apply``),
  so our backend's ``execute`` never saw the statements to strip their ``;`` (ORA-00911);
- it pairs apply step *i* with the *i*-th statement of the reversed rollback file
  (``Migration.load``, ``zip_longest``): a rollback file with one statement more or less
  silently undoes the wrong steps, and after a failure it replays those undo statements on
  a schema whose DDL had already committed;
- it checks nothing before a step, so a re-run after a stop fails on the first object that
  exists (ORA-00955, ORA-01430).

Fixing that would replace its internal schema, its step execution, its file pairing and its
failure handling: everything but the file reading. So Oracle runs ``_steps`` migrations here:
one statement per step with its exact undo, each skipped when the data dictionary shows it
done, each DDL committing as Oracle does; a migration is recorded in SCHEMA_MIGRATION once all
its steps are done. A second session holds the SCHEMA_MIGRATION lock row (``FOR UPDATE WAIT``)
for the whole run, so two runners never interleave (the working session's DDL commits would
release a lock it held itself).

Ids are ``NNNN_name``, the id of the PostgreSQL twin (docs/design.md, "Migrations"). A schema
migrated by yoyo (a site that repaired yoyo's bookkeeping by hand), under the old ``NNNN.name``
ids (``RENAMED``) or the new ones, is adopted: its ids are recorded here, so nothing runs twice.
The database character set is checked before anything is created (``check_charset``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final

import oracledb

from flightstate_core.domain.errors import ConfigError
from flightstate_oracle import _sql as sql
from flightstate_oracle._db import query, run
from flightstate_oracle._errors import translated
from flightstate_oracle._sql import Statement
from flightstate_oracle._steps import (
    MIGRATIONS_DIR,
    Check,
    Migration,
    ObjectKind,
    Step,
    load_migrations,
)
from flightstate_oracle.session import connect, parse_oracle_url

__all__ = [
    "MIGRATIONS_DIR",
    "RENAMED",
    "REQUIRED_CHARSET",
    "applied_migrations",
    "applied_on",
    "check_charset",
    "migrate",
    "migrate_on",
    "rollback",
    "rollback_on",
]

log = logging.getLogger(__name__)
Connect = Callable[[], oracledb.Connection]
REQUIRED_CHARSET: Final = "AL32UTF8"

#: Old id -> new id: the ``NNNN.name`` ids, numbered on their own, became the ids of their
#: PostgreSQL twins (a PostgreSQL-only migration leaves its number unused here).
RENAMED: Final[Mapping[str, str]] = {
    "0001.initial": "0001_core",
    "0002.history_display": "0002_history_display",
    "0003.lifecycle_requests": "0003_lifecycle_requests",
    "0004.outbox_watermark": "0004_outbox_watermark",
    "0005.inbox_gaps": "0007_inbox_gaps",
    "0006.outbox_parked": "0008_outbox_parked",
    "0007.provenance": "0009_provenance",
}


def check_charset(conn: oracledb.Connection) -> None:
    """``ConfigError`` (one line) unless the database character set is AL32UTF8: byte limits
    are computed in UTF-8 and every SIS text must survive (README, "Character set")."""
    rows = query(conn, sql.DATABASE_CHARSET)
    charset = str(rows[0]["VALUE"]) if rows else "unknown"
    if charset != REQUIRED_CHARSET:
        raise ConfigError(
            f"Oracle database character set (NLS_CHARACTERSET) is {charset}; flightstate "
            f"needs {REQUIRED_CHARSET}: use a database created with it"
        )


def _exists(conn: oracledb.Connection, check: Check) -> bool:
    if check.kind is ObjectKind.COLUMN:
        table, column = check.name.split(".")
        params = {"TABLE_NAME": table, "COLUMN_NAME": column}
    else:
        params = {"NAME": check.name}
    rows = query(conn, sql.DICTIONARY_LOOKUP[check.kind.value], params)
    return int(str(rows[0]["N"])) > 0


def _done(conn: oracledb.Connection, check: Check) -> bool:
    """Whether the step's effect is already in the schema (data steps never are)."""
    return check.kind is not ObjectKind.DATA and _exists(conn, check) == check.present


def _run_step(conn: oracledb.Connection, migration: str, step: Step, *, undo: bool) -> None:
    text, check = (step.undo, step.undo_check) if undo else (step.apply, step.apply_check)
    direction = "undo" if undo else "apply"
    if text is None or check is None or _done(conn, check):
        return
    log.info("%s %s step %d", direction, migration, step.number)
    run(conn, Statement(f"{migration}#{step.number}:{direction}", text, {}))
    conn.commit()  # DDL committed already; a data step commits with itself


def _apply(conn: oracledb.Connection, migration: Migration) -> None:
    for step in migration.steps:
        _run_step(conn, migration.id, step, undo=False)
    run(conn, sql.MIGRATION_RECORD, {"NAME": migration.id})
    conn.commit()


def _undo(conn: oracledb.Connection, migration: Migration) -> None:
    for step in reversed(migration.steps):
        _run_step(conn, migration.id, step, undo=True)
    run(conn, sql.MIGRATION_UNRECORD, {"NAME": migration.id})
    conn.commit()


def _ensure_bookkeeping(conn: oracledb.Connection) -> None:
    if not _exists(conn, Check(ObjectKind.TABLE, sql.BOOKKEEPING_TABLE, True)):
        try:
            run(conn, sql.BOOKKEEPING_CREATE)
        except oracledb.DatabaseError:  # another runner created it first (ORA-00955)
            if not _exists(conn, Check(ObjectKind.TABLE, sql.BOOKKEEPING_TABLE, True)):
                raise
    run(conn, sql.MIGRATION_RECORD, {"NAME": sql.LOCK_ROW})
    conn.commit()


def _adopt_yoyo(conn: oracledb.Connection, known: Iterable[str]) -> None:
    """Record the ids yoyo recorded (old ones through ``RENAMED``), if yoyo's table exists."""
    if not _exists(conn, Check(ObjectKind.COLUMN, f"{sql.YOYO_TABLE}.migration_id", True)):
        return
    wanted = set(known)
    for row in query(conn, sql.YOYO_RECORDS):
        recorded = str(row["YOYO_ID"])
        new_id = RENAMED.get(recorded, recorded)
        if new_id in wanted:
            run(conn, sql.MIGRATION_RECORD, {"NAME": new_id})
    conn.commit()


def _recorded(conn: oracledb.Connection) -> list[str]:
    rows = query(conn, sql.MIGRATIONS_RECORDED, {"LOCK_ROW": sql.LOCK_ROW})
    return [str(row["MIGRATION_NAME"]) for row in rows]


def _locked_run(connect_to: Connect, work: Callable[[oracledb.Connection, list[str]], list[str]]
                ) -> list[str]:  # fmt: skip
    """Charset check, bookkeeping, the lock row held on a second session, then *work*."""
    conn = connect_to()
    try:
        check_charset(conn)
        _ensure_bookkeeping(conn)
        lock = connect_to()
        try:
            query(lock, sql.MIGRATION_LOCK, {"NAME": sql.LOCK_ROW})
            _adopt_yoyo(conn, (m.id for m in load_migrations()))
            return work(conn, _recorded(conn))
        finally:
            lock.rollback()  # releases the lock row
            lock.close()
    finally:
        conn.close()


def _upto(migrations: Sequence[Migration], target: str | None) -> list[Migration]:
    ids = [m.id for m in migrations]
    if target is not None and target not in ids:
        raise ConfigError(f"migration target {target!r} is not one of {ids}")
    return list(migrations if target is None else migrations[: ids.index(target) + 1])


def migrate_on(connect_to: Connect, target: str | None = None) -> list[str]:
    """Apply the pending migrations (up to and including ``target``) on sessions from
    ``connect_to``; their ids. A run stopped anywhere completes when run again."""

    def work(conn: oracledb.Connection, recorded: list[str]) -> list[str]:
        done = []
        for migration in _upto(load_migrations(), target):
            if migration.id not in recorded:
                _apply(conn, migration)
                done.append(migration.id)
        return done

    with translated():
        return _locked_run(connect_to, work)


def rollback_on(connect_to: Connect, target: str | None = None) -> list[str]:
    """Undo the applied migrations after ``target`` (None: all), newest first; their ids."""

    def work(conn: oracledb.Connection, recorded: list[str]) -> list[str]:
        keep = {m.id for m in _upto(load_migrations(), target)} if target else set()
        done = []
        for migration in reversed(load_migrations()):
            if migration.id in recorded and migration.id not in keep:
                _undo(conn, migration)
                done.append(migration.id)
        return done

    with translated():
        return _locked_run(connect_to, work)


def applied_on(connect_to: Connect) -> list[str]:
    """Ids of the applied migrations, in order."""
    with translated():
        conn = connect_to()
        try:
            if not _exists(conn, Check(ObjectKind.TABLE, sql.BOOKKEEPING_TABLE, True)):
                return []
            recorded = set(_recorded(conn))
        finally:
            conn.close()
    return [m.id for m in load_migrations() if m.id in recorded]


def _connector(url: str) -> Connect:
    settings = parse_oracle_url(url)  # a ConfigError naming the problem, before connecting
    return lambda: connect(settings)


def migrate(url: str, target: str | None = None) -> list[str]:
    """Apply pending migrations (up to and including ``target``) to the schema of ``url``."""
    return migrate_on(_connector(url), target)


def rollback(url: str, target: str | None = None) -> list[str]:
    """Undo the migrations after ``target`` (None: every one) on the schema of ``url``."""
    return rollback_on(_connector(url), target)


def applied_migrations(url: str) -> list[str]:
    """Ids of the migrations applied to the schema of ``url``, in order."""
    return applied_on(_connector(url))

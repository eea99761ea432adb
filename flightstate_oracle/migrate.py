"""Schema migrations with yoyo-migrations (``flightstate_oracle/migrations/*.sql``).

yoyo ships an Oracle backend written for cx_Oracle. ``OracleMigrationBackend`` adapts it:

- the driver is python-oracledb in thick mode (``init_thick_mode``, 11.2 needs it);
- yoyo splits a ``.sql`` file with sqlparse and keeps each statement's trailing ``;``,
  which Oracle rejects (ORA-00911/ORA-00933): ``execute`` strips it (``strip_terminator``);
- Oracle has no ``RELEASE SAVEPOINT``: it is a no-op (a savepoint ends with its transaction).

Oracle DDL commits implicitly, so yoyo detects "no transactional DDL" and, if a statement
fails, runs the rollback file's statements for the steps already done. Migrations are frozen
once released; a change is a new file (expand first, review F6).

Ids are ``NNNN_name``, the id of the PostgreSQL twin (docs/design.md, "Migrations"). Until
they were renamed they were ``NNNN.name``, numbered on their own; ``RENAMED`` maps them, and
``migrate`` rewrites the records of a schema migrated under the old ids before yoyo applies
anything (an UPDATE of yoyo's table, DML, in one transaction), so nothing runs twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any, Final

from yoyo import read_migrations
from yoyo.backends.contrib.oracle import OracleBackend
from yoyo.connections import parse_uri
from yoyo.migrations import default_migration_table

from flightstate_core.support.migrations import applied_ids, migrate_with
from flightstate_oracle._errors import translated
from flightstate_oracle.session import init_thick_mode, parse_oracle_url

__all__ = [
    "MIGRATIONS_DIR",
    "RENAMED",
    "OracleMigrationBackend",
    "applied_migrations",
    "migrate",
    "strip_terminator",
]

MIGRATIONS_DIR: Final = Path(__file__).with_name("migrations")

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


def strip_terminator(statement: str) -> str:
    """A statement without its trailing ``;`` (and surrounding blanks)."""
    text = statement.strip()
    while text.endswith(";"):
        text = text[:-1].rstrip()
    return text


class OracleMigrationBackend(OracleBackend):  # type: ignore[misc]
    """yoyo's Oracle backend on python-oracledb (thick mode)."""

    driver_module = "oracledb"

    def execute(self, sql: str, params: Any = None) -> Any:
        return super().execute(strip_terminator(sql), params)

    def savepoint_release(self, id: str) -> None:
        del id  # Oracle has no RELEASE SAVEPOINT


def _backend(url: str) -> OracleMigrationBackend:
    parse_oracle_url(url)  # validate early with a ConfigError naming the problem
    init_thick_mode()
    # pool options (?min=..) are ours, not connect() arguments
    parsed = parse_uri(url.replace("oracle+oracledb://", "oracle://", 1).split("?", 1)[0])
    backend = OracleMigrationBackend(parsed, default_migration_table)
    backend.init_database()
    return backend


def migrate(url: str, target: str | None = None) -> list[str]:
    """Apply pending migrations (up to and including ``target`` if given) to the schema of
    ``url``; return their ids."""
    migrations = read_migrations(str(MIGRATIONS_DIR))
    with translated():
        return migrate_with(partial(_backend, url), migrations, RENAMED, target)


def applied_migrations(url: str) -> list[str]:
    """Ids of the migrations applied to the schema of ``url``, in order."""
    migrations = read_migrations(str(MIGRATIONS_DIR))
    with translated():
        return applied_ids(partial(_backend, url), migrations)

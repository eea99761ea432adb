"""Applying yoyo-migrations the same way for every store, and renamed migration ids.

yoyo names a migration by its file stem and records what it applied in its own table
(``_yoyo_migration``: ``migration_hash``, the sha256 of the id and the primary key, and
``migration_id``). A file renamed under a new id would be applied a second time, so before
yoyo looks for pending migrations, ``adopt_renamed`` rewrites the records of the old ids to
the new ones (docs/design.md, "Migrations"). It only touches rows that still carry an old
id, so running it again changes nothing.

The backends pass yoyo's own objects (its backend and its migration list); this module
only calls their methods, so it needs neither yoyo nor a driver. Statements go through
yoyo's ``execute`` with ``:name`` binds, which yoyo turns into the driver's paramstyle.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from typing import Any, Final, Protocol

__all__ = [
    "RENAME_RECORDED",
    "MigrationBackend",
    "adopt_renamed",
    "applied_ids",
    "apply_pending",
    "id_hash",
    "migrate_with",
    "renamed_params",
]

#: One recorded id renamed. The NOT EXISTS keeps a database that somehow holds both ids
#: (the primary key would refuse the update) as it is instead of failing the migration.
RENAME_RECORDED: Final = (
    'UPDATE {table} SET "migration_hash" = :new_hash, "migration_id" = :new_id '
    'WHERE "migration_hash" = :old_hash AND NOT EXISTS '
    '(SELECT 1 FROM {table} WHERE "migration_hash" = :new_hash)'
)


class MigrationBackend(Protocol):
    """The part of a ``yoyo.backends.DatabaseBackend`` these functions use."""

    migration_table: str
    connection: Any

    def quote_identifier(self, s: str) -> str: ...
    def ensure_internal_schema_updated(self) -> None: ...
    def transaction(self) -> AbstractContextManager[Any]: ...
    def lock(self) -> AbstractContextManager[Any]: ...
    def execute(self, sql: str, params: Mapping[str, object] | None = None) -> Any: ...
    def to_apply(self, migrations: Any) -> Any: ...
    def apply_migrations(self, migrations: Any) -> None: ...
    def is_applied(self, migration: Any) -> bool: ...


def id_hash(migration_id: str) -> str:
    """The key yoyo records for a migration id (``yoyo.migrations.get_migration_hash``)."""
    return hashlib.sha256(migration_id.encode("utf-8")).hexdigest()


def renamed_params(renamed: Mapping[str, str]) -> list[dict[str, str]]:
    """The bind values of ``RENAME_RECORDED``, one dict per old id -> new id."""
    return [
        {"old_hash": id_hash(old), "new_hash": id_hash(new), "new_id": new}
        for old, new in renamed.items()
    ]


def adopt_renamed(backend: MigrationBackend, renamed: Mapping[str, str]) -> None:
    """Record every applied old id of ``renamed`` under its new id, in one transaction."""
    if not renamed:
        return
    backend.ensure_internal_schema_updated()  # yoyo's tables exist from here on
    statement = RENAME_RECORDED.format(table=backend.quote_identifier(backend.migration_table))
    with backend.transaction():
        for params in renamed_params(renamed):
            backend.execute(statement, params)


def _up_to(migrations: Any, target: str | None) -> Iterable[str] | None:
    if target is None:
        return None
    ids = [m.id for m in migrations]
    return ids[: ids.index(target) + 1]


def apply_pending(
    backend: MigrationBackend,
    migrations: Any,
    renamed: Mapping[str, str],
    target: str | None = None,
) -> list[str]:
    """Under yoyo's lock: adopt renamed ids, then apply the pending migrations (up to and
    including ``target`` if given); their ids. The caller closes ``backend``."""
    allowed = _up_to(migrations, target)
    with backend.lock():
        adopt_renamed(backend, renamed)
        pending = backend.to_apply(migrations)
        if allowed is not None:
            wanted = set(allowed)
            pending = pending.filter(lambda m: m.id in wanted)
        backend.apply_migrations(pending)
        return [m.id for m in pending]


def migrate_with(
    open_backend: Callable[[], MigrationBackend],
    migrations: Any,
    renamed: Mapping[str, str],
    target: str | None = None,
) -> list[str]:
    """A backend's ``migrate``: ``apply_pending`` on a backend opened for this call only."""
    backend = open_backend()
    try:
        return apply_pending(backend, migrations, renamed, target)
    finally:
        backend.connection.close()


def applied_ids(open_backend: Callable[[], MigrationBackend], migrations: Any) -> list[str]:
    """A backend's ``applied_migrations``: the ids of ``migrations`` applied, in order."""
    backend = open_backend()
    try:
        return [m.id for m in migrations if backend.is_applied(m)]
    finally:
        backend.connection.close()

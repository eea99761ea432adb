"""Schema migrations with yoyo-migrations (``flightstate_pg/migrations/*.sql``).

Migrations are frozen once released: a later change is a new file, additive first
(expand, backfill, verify, switch, and only then contract; docs/design.md, "Migrations"). Ids are
``NNNN_name`` (docs/design.md, "Migrations"); an id renamed after release is listed in
``RENAMED`` and its record rewritten before yoyo applies (``flightstate_core.support.migrations``).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlencode

from psycopg.conninfo import conninfo_to_dict
from yoyo import get_backend, read_migrations

from flightstate_core.support.migrations import applied_ids, migrate_with
from flightstate_pg._errors import translated

__all__ = ["MIGRATIONS_DIR", "RENAMED", "applied_migrations", "migrate", "yoyo_url"]

MIGRATIONS_DIR: Final = Path(__file__).with_name("migrations")

#: Old id -> new id of migrations renamed after release: none, the PostgreSQL files have
#: carried their ``NNNN_name`` ids since they shipped.
RENAMED: Final[Mapping[str, str]] = {}


def yoyo_url(dsn: str) -> str:
    """A ``postgresql+psycopg://`` URL for yoyo from a libpq URL or key=value DSN."""
    params = {key: str(value) for key, value in conninfo_to_dict(dsn).items()}
    dbname = params.pop("dbname", "")
    return f"postgresql+psycopg:///{dbname}?{urlencode(params)}"


def _backend(dsn: str) -> Any:
    return get_backend(yoyo_url(dsn))


def migrate(dsn: str, target: str | None = None) -> list[str]:
    """Apply pending migrations (up to and including ``target`` if given); return their ids."""
    migrations = read_migrations(str(MIGRATIONS_DIR))
    with translated():
        return migrate_with(partial(_backend, dsn), migrations, RENAMED, target)


def applied_migrations(dsn: str) -> list[str]:
    """Ids of the migrations applied to this database, in order."""
    migrations = read_migrations(str(MIGRATIONS_DIR))
    with translated():
        return applied_ids(partial(_backend, dsn), migrations)

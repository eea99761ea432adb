"""Schema migrations with yoyo-migrations (``flightstate_pg/migrations/*.sql``).

Migrations are frozen once released: a later change is a new file, additive first
(expand, backfill, verify, switch, and only then contract — review F6). Ids are
``NNNN_name`` (docs/design.md, "Migrations"); an id renamed after release is listed in
``RENAMED`` and its record rewritten before yoyo applies (``flightstate_core.support.migrations``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Final
from urllib.parse import urlencode

from psycopg.conninfo import conninfo_to_dict
from yoyo import get_backend, read_migrations

from flightstate_core.support.migrations import apply_pending
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


def migrate(dsn: str, target: str | None = None) -> list[str]:
    """Apply pending migrations (up to and including ``target`` if given); return their ids."""
    migrations = read_migrations(str(MIGRATIONS_DIR))
    with translated():
        backend = get_backend(yoyo_url(dsn))
        try:
            return apply_pending(backend, migrations, RENAMED, target)
        finally:
            backend.connection.close()


def applied_migrations(dsn: str) -> list[str]:
    """Ids of the migrations applied to this database, in order."""
    migrations = read_migrations(str(MIGRATIONS_DIR))
    with translated():
        backend = get_backend(yoyo_url(dsn))
        try:
            return [m.id for m in migrations if backend.is_applied(m)]
        finally:
            backend.connection.close()

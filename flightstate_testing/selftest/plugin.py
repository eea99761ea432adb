"""The pytest plugin of ``flightstate selftest``: ``fresh_pg`` is a new schema in the
site's own database, migrated, and dropped after its test.

The database and the schemas' prefix come from the environment that
``flightstate_testing.selftest.run_suites`` sets for the one pytest run it makes. Every
schema it creates starts with that prefix, so whatever a crash leaves behind is found and
dropped by the same run's last step (``drop_leftovers``).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from flightstate_core.domain.errors import TransientError
from flightstate_core.support.dsn import redact
from flightstate_pg import migrate

__all__ = [
    "PREFIX_VARIABLE",
    "STORE_VARIABLE",
    "drop_leftovers",
    "fresh_pg",
    "in_schema",
    "require_reachable",
]

STORE_VARIABLE = "FLIGHTSTATE_SELFTEST_STORE_DSN"
PREFIX_VARIABLE = "FLIGHTSTATE_SELFTEST_PREFIX"

_LEFTOVERS = "SELECT nspname FROM pg_namespace WHERE nspname LIKE %s"


def require_reachable(dsn: str, timeout: int = 5) -> None:
    """Return once *dsn* answers; TransientError naming host, port and database (never the
    password) if it does not within *timeout* seconds."""
    try:
        with psycopg.connect(dsn, autocommit=True, connect_timeout=timeout):
            return
    except psycopg.Error as exc:
        params = conninfo_to_dict(dsn)
        host, port = params.get("host") or "localhost", params.get("port") or 5432
        where = f"{host}:{port}/{params.get('dbname', '')}"
        detail = " ".join(str(redact(str(exc))).split())[:200]
        raise TransientError(f"store not reachable at {where}: {detail}") from None


def in_schema(dsn: str, schema: str) -> str:
    """*dsn* with ``search_path`` set to *schema* (the DSN's own options kept)."""
    given = conninfo_to_dict(dsn).get("options")
    options = " ".join(str(part) for part in (f"-c search_path={schema}", given) if part)
    return make_conninfo(dsn, options=options)


@pytest.fixture
def fresh_pg() -> Iterator[str]:
    """The DSN of an empty migrated store: a schema of its own in the site's database."""
    dsn, prefix = os.environ[STORE_VARIABLE], os.environ[PREFIX_VARIABLE]
    schema = f"{prefix}_{secrets.token_hex(4)}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    try:
        scoped = in_schema(dsn, schema)
        migrate(scoped)
        yield scoped
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def drop_leftovers(dsn: str, prefix: str) -> list[str]:
    """Drop every schema named with *prefix* (a test killed before its teardown); their
    names."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        found = [str(row[0]) for row in conn.execute(_LEFTOVERS, (f"{prefix}\\_%",)).fetchall()]
        for schema in found:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))
    return found

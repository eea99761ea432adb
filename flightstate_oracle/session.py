"""Oracle connection settings, thick-mode start-up for 11.2, and the connection pool.

Why thick mode: python-oracledb's thin mode speaks only to Oracle Database 12.1 and later;
an 11.2 server needs thick mode, i.e. Oracle Client libraries (Instant Client 19 still
connects to 11.2.0.4; 21c and later do not). ``init_thick_mode`` loads them from
``lib_dir`` or ``FLIGHTSTATE_ORACLE_CLIENT_DIR`` once per process. Nothing connects at import.

URL form (also what the yoyo migrations take)::

    oracle://user:password@host:port/service_name[?min=1&max=4&wait_timeout=10000]
"""

from __future__ import annotations

import os
import threading
from typing import Final
from urllib.parse import parse_qs, unquote, urlsplit

import oracledb
from attrs import frozen

from flightstate_core.domain.errors import ConfigError
from flightstate_oracle import _sql as sql
from flightstate_oracle._errors import translated

__all__ = ["CLIENT_DIR_ENV", "OracleSettings", "create_pool", "init_thick_mode", "parse_oracle_url"]

CLIENT_DIR_ENV: Final = "FLIGHTSTATE_ORACLE_CLIENT_DIR"
_LOCK = threading.Lock()
_POOL_OPTIONS: Final = {"min": 1, "max": 4, "wait_timeout": 10000}


@frozen
class OracleSettings:
    """Where to connect and how big the pool is."""

    user: str
    password: str
    dsn: str  # host:port/service_name (Easy Connect) or a tnsnames alias
    pool_min: int = 1
    pool_max: int = 4
    wait_timeout_ms: int = 10000


def parse_oracle_url(url: str) -> OracleSettings:
    """Settings from an ``oracle://`` URL; ``ConfigError`` naming the problem otherwise."""
    parts = urlsplit(url)
    if parts.scheme not in ("oracle", "oracle+oracledb"):
        raise ConfigError(f"oracle URL: scheme {parts.scheme!r} is not oracle://")
    if not parts.username or parts.password is None or not parts.hostname:
        raise ConfigError("oracle URL: needs user, password and host")
    service = unquote(parts.path.lstrip("/"))
    dsn = parts.hostname + (f":{parts.port}" if parts.port else "")
    dsn += f"/{service}" if service else ""
    options = dict(_POOL_OPTIONS)
    for key, values in parse_qs(parts.query).items():
        if key not in options:
            raise ConfigError(f"oracle URL: unknown option {key!r}")
        try:
            options[key] = int(values[-1])
        except ValueError as exc:
            raise ConfigError(f"oracle URL: option {key} must be an integer") from exc
    return OracleSettings(
        unquote(parts.username),
        unquote(parts.password),
        dsn,
        options["min"],
        options["max"],
        options["wait_timeout"],
    )


def init_thick_mode(lib_dir: str | None = None) -> None:
    """Load the Oracle Client libraries (once); ``ConfigError`` if they cannot be loaded."""
    lib_dir = lib_dir or os.environ.get(CLIENT_DIR_ENV) or None
    with _LOCK:
        if not oracledb.is_thin_mode():
            return  # already initialised in this process
        try:
            oracledb.init_oracle_client(lib_dir=lib_dir)
        except oracledb.Error as exc:
            raise ConfigError(
                f"Oracle Client libraries not loaded from {lib_dir or '(system path)'} "
                f"(set {CLIENT_DIR_ENV}; 11.2 needs thick mode): {exc}"
            ) from exc
    if oracledb.is_thin_mode():
        raise ConfigError("python-oracledb stayed in thin mode, which cannot reach Oracle 11.2")


def _setup_session(connection: oracledb.Connection, requested_tag: str | None) -> None:
    """Pool session callback: UTC session zone, binary sort/compare (FLID order = Python)."""
    del requested_tag
    with connection.cursor() as cursor:
        cursor.execute(sql.SESSION_SETUP.text)


def create_pool(settings: OracleSettings, lib_dir: str | None = None) -> oracledb.ConnectionPool:
    """A thick-mode connection pool; every new session runs ``SESSION_SETUP``."""
    init_thick_mode(lib_dir)
    with translated():
        return oracledb.create_pool(
            user=settings.user,
            password=settings.password,
            dsn=settings.dsn,
            min=settings.pool_min,
            max=settings.pool_max,
            increment=1,
            getmode=oracledb.POOL_GETMODE_TIMEDWAIT,
            wait_timeout=settings.wait_timeout_ms,
            session_callback=_setup_session,
        )

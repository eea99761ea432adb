"""Oracle connection settings, thick-mode start-up for 11.2, and the connection pool.

Why thick mode: python-oracledb's thin mode speaks only to Oracle Database 12.1 and later;
an 11.2 server needs thick mode, i.e. Oracle Client libraries. python-oracledb's thick mode
loads Oracle Client 19 or later, and Oracle Client 19 connects to Database 11.2 or later
(Oracle's client/server interoperability note, Doc ID 207303.1; check it before using a later
client line against 11.2): a site installs Instant Client 19 (flightstate_oracle/README.md).
``init_thick_mode`` loads them from ``lib_dir`` or ``FLIGHTSTATE_ORACLE_CLIENT_DIR`` once per
process. Nothing connects at import.

Every session (pool and migration runner) says who it is: MODULE ``flightstate`` and
CLIENT_IDENTIFIER (``holder_client_identifier``, or host:pid), so a standby can find a frozen
ex-leader's sessions (``flightstate_oracle.takeover``) and a DBA can see them in V$SESSION; and
it has a ``call_timeout`` (``call_timeout_ms``): no round trip waits longer on the client,
and it is longer than the longest wait a statement asks for (``FOR UPDATE WAIT``), so that
wait still ends in ORA-30006 on the server first. The statement cache holds every registered
statement (``statement_cache_size``): a batch cycle runs about 40 of them.

URL form (also what ``migrate`` takes)::

    oracle://user:password@host:port/service_name[?min=1&max=4&wait_timeout=10000
        &call_timeout=45000]
"""

from __future__ import annotations

import os
import socket
import threading
from typing import Final
from urllib.parse import parse_qs, unquote, urlsplit

import oracledb
from attrs import evolve, frozen

from flightstate_core.domain.errors import ConfigError
from flightstate_core.engine.lease_identity import SEPARATOR, split_holder
from flightstate_oracle import _sql as sql
from flightstate_oracle._errors import translated

__all__ = [
    "CLIENT_DIR_ENV",
    "MODULE",
    "OracleSettings",
    "connect",
    "create_pool",
    "for_holder",
    "holder_client_identifier",
    "init_thick_mode",
    "parse_oracle_url",
    "pool_options",
    "prepare_session",
    "statement_cache_size",
]

CLIENT_DIR_ENV: Final = "FLIGHTSTATE_ORACLE_CLIENT_DIR"
#: V$SESSION.MODULE of every flightstate session.
MODULE: Final = "flightstate"
#: Oracle keeps 64 bytes of CLIENT_IDENTIFIER.
CLIENT_ID_BYTES: Final = 64
#: A round trip may take the longest server-side wait (``FOR UPDATE WAIT``) plus this.
CALL_MARGIN_MS: Final = 15_000
DEFAULT_CALL_TIMEOUT_MS: Final = sql.LOCK_WAIT_SECONDS * 1000 + CALL_MARGIN_MS
_LOCK = threading.Lock()
_POOL_OPTIONS: Final = {
    "min": 1, "max": 4, "wait_timeout": 10000, "call_timeout": DEFAULT_CALL_TIMEOUT_MS,
}  # fmt: skip


def holder_client_identifier(holder: str) -> str:
    """The CLIENT_IDENTIFIER of every session a lease *holder* (``name#instance``) opens;
    a long name is cut, never the instance, so a standby ends that instance's sessions only."""
    name, instance = split_holder(holder)
    suffix = f"{SEPARATOR}{instance}" if instance else ""
    head = str(name).encode()[: CLIENT_ID_BYTES - len(suffix.encode())]
    return head.decode(errors="ignore") + suffix


def for_holder(settings: OracleSettings, stored_holder: str) -> OracleSettings:
    """*settings* whose sessions carry the CLIENT_IDENTIFIER of a lease holder
    (``lease.stored_holder(name)``): a standby can then end them if this process freezes while
    it leads (``flightstate_oracle.takeover``). Give the lease and the pool one instance id."""
    return evolve(settings, client_identifier=holder_client_identifier(stored_holder))


def _default_client_identifier() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"[:CLIENT_ID_BYTES]


def statement_cache_size() -> int:
    """Every registered statement, rounded up to the next 50 (room for growth)."""
    return (len(sql.REGISTRY) // 50 + 1) * 50


@frozen
class OracleSettings:
    """Where to connect and how big the pool is."""

    user: str
    password: str
    dsn: str  # host:port/service_name (Easy Connect) or a tnsnames alias
    pool_min: int = 1
    pool_max: int = 4
    wait_timeout_ms: int = 10000
    call_timeout_ms: int = DEFAULT_CALL_TIMEOUT_MS
    #: V$SESSION.CLIENT_IDENTIFIER (None: host:pid); a lead-capable process passes
    #: ``holder_client_identifier(lease.stored_holder(name))``.
    client_identifier: str | None = None

    def __attrs_post_init__(self) -> None:
        if self.call_timeout_ms <= sql.LOCK_WAIT_SECONDS * 1000:
            raise ConfigError(
                f"oracle call_timeout {self.call_timeout_ms} ms must exceed the "
                f"{sql.LOCK_WAIT_SECONDS} s FOR UPDATE WAIT (ORA-30006 must come first)"
            )
        if self.client_identifier is not None and (
            not self.client_identifier or len(self.client_identifier.encode()) > CLIENT_ID_BYTES
        ):
            raise ConfigError(f"oracle client_identifier: 1..{CLIENT_ID_BYTES} bytes")


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
        options["call_timeout"],
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


def prepare_session(connection: oracledb.Connection, settings: OracleSettings) -> None:
    """Name the session (MODULE, CLIENT_IDENTIFIER: sent with the next round trip, no SQL),
    bound its calls (``call_timeout``), then UTC session zone and binary sort/compare
    (FLID order = Python)."""
    connection.module = MODULE
    connection.client_identifier = settings.client_identifier or _default_client_identifier()
    connection.call_timeout = settings.call_timeout_ms
    with connection.cursor() as cursor:
        cursor.execute(sql.SESSION_SETUP.text)


def pool_options(settings: OracleSettings) -> dict[str, object]:
    """The ``oracledb.create_pool`` keywords for *settings* (pure)."""

    def setup(connection: oracledb.Connection, requested_tag: str | None) -> None:
        del requested_tag
        prepare_session(connection, settings)

    return {
        "user": settings.user, "password": settings.password, "dsn": settings.dsn,
        "min": settings.pool_min, "max": settings.pool_max, "increment": 1,
        "getmode": oracledb.POOL_GETMODE_TIMEDWAIT, "wait_timeout": settings.wait_timeout_ms,
        "stmtcachesize": statement_cache_size(), "session_callback": setup,
    }  # fmt: skip


def create_pool(settings: OracleSettings, lib_dir: str | None = None) -> oracledb.ConnectionPool:
    """A thick-mode connection pool; every new session runs ``prepare_session``."""
    init_thick_mode(lib_dir)
    with translated():
        return oracledb.create_pool(**pool_options(settings))


def connect(settings: OracleSettings, lib_dir: str | None = None) -> oracledb.Connection:
    """One thick-mode session outside the pool (the migration runner), prepared the same way
    but without a call timeout: one DDL step may rightly take long (an index on a big table)."""
    init_thick_mode(lib_dir)
    with translated():
        connection = oracledb.connect(
            user=settings.user, password=settings.password, dsn=settings.dsn,
            stmtcachesize=statement_cache_size(),
        )  # fmt: skip
        prepare_session(connection, settings)
        connection.call_timeout = 0
        return connection

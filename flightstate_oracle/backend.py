"""``open_backend``: Oracle 11g as the runner's ``StoreBackend`` (``flightstate_core.ports``),
twin of ``flightstate_pg.backend``.

Why the client is loaded when the backend is opened: 11.2 needs python-oracledb's thick
mode (Oracle Client libraries; thin mode reaches 12.1+ only), and an operator who lacks them
should read one line saying so before anything else happens, not a driver traceback at the
first query. An unreachable server likewise ends in one line naming the DSN's host. The
pool (shared by every adapter of the process) opens on first use. The Oracle store has no
inbox table: its inbox is MySQL's ``cminmsgs`` (``FLIGHTSTATE_MYSQL_DSN``).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

import oracledb

from flightstate_core.domain.errors import ConfigError, FlightstateError, TransientError
from flightstate_core.ports import (
    BackendOpener,
    BackendSettings,
    Inbox,
    SessionWaits,
    StoreFailure,
)
from flightstate_core.support.preflight import Check, leader_check
from flightstate_oracle._errors import STORE_WIDE_CODES, translated
from flightstate_oracle.lease import OracleLeaderLease
from flightstate_oracle.migrate import migrate
from flightstate_oracle.outbox import OracleOutbox
from flightstate_oracle.preflight import store_checks
from flightstate_oracle.queries import OracleQueries
from flightstate_oracle.session import (
    CLIENT_DIR_ENV,
    OracleSettings,
    connect,
    create_pool,
    for_holder,
    init_thick_mode,
    parse_oracle_url,
)
from flightstate_oracle.store import OracleStore

__all__ = ["OracleBackend", "check_dsn", "failure_of", "open_backend"]

#: ORA codes of a server that answered and refused this login (wrong password, locked
#: or expired account, no CREATE SESSION privilege).
_REFUSED_CODES: Final = frozenset({"ORA-01017", "ORA-28000", "ORA-28001", "ORA-01045"})
_NO_INBOX: Final = ("the Oracle store has no inbox table: set FLIGHTSTATE_MYSQL_DSN "
                    "(the AODB's cminmsgs in MySQL/MariaDB)")  # fmt: skip


def _first_line(exc: BaseException | None) -> str:
    text = str(exc or "").strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _load_client(client_dir: str) -> None:
    """Thick mode, or ``ConfigError`` in one line naming what is needed."""
    try:
        init_thick_mode(client_dir or None)
    except ConfigError as exc:
        where = client_dir or f"${CLIENT_DIR_ENV} or the system library path"
        raise ConfigError(
            f"store_dsn: oracle:// needs Oracle Client 19+ libraries (python-oracledb thick "
            f"mode; Oracle 11.2 cannot be reached without them), none loaded from {where}: "
            f"{_first_line(exc.__cause__ or exc)}"
        ) from None


def _code(exc: BaseException) -> str:
    seen: BaseException | None = exc
    for _ in range(5):
        if isinstance(seen, oracledb.Error):
            error = seen.args[0] if seen.args else None
            return str(getattr(error, "full_code", "") or "")
        if seen is None:
            break
        seen = seen.__cause__ or seen.__context__
    return str(getattr(exc, "code", "") or "")


def failure_of(exc: BaseException) -> StoreFailure:
    """REFUSED for a refused login, UNREACHABLE for a server or session that never answered
    or went away (``_errors.STORE_WIDE_CODES``), else OTHER."""
    code = _code(exc)
    if code in _REFUSED_CODES:
        return StoreFailure.REFUSED
    if code in STORE_WIDE_CODES or (isinstance(exc, TransientError) and exc.store_wide):
        return StoreFailure.UNREACHABLE
    return StoreFailure.OTHER


class OracleBackend:
    """The adapters of one runner process on one Oracle schema (one shared pool)."""

    kind = "oracle"

    def __init__(self, dsn: str, settings: BackendSettings) -> None:
        self._url = dsn
        self._where: OracleSettings = parse_oracle_url(dsn)
        self._settings = settings
        self._pool: oracledb.ConnectionPool | None = None
        self._lock = threading.Lock()
        _load_client(settings.client_dir)

    def pool(self) -> oracledb.ConnectionPool:
        """The process's pool, opened on first use; an unreachable server or a refused
        login is one line naming the server."""
        with self._lock:
            if self._pool is None:
                try:
                    self._pool = create_pool(self._session_settings(),
                                             self._settings.client_dir or None)  # fmt: skip
                    with translated(), self._pool.acquire():
                        pass  # the pool opens lazily in thick mode: prove the login now
                except FlightstateError as exc:
                    self._pool = None
                    raise _named(exc, self._where.dsn) from exc
            return self._pool

    def _session_settings(self) -> OracleSettings:
        """Sessions named after this process's lease holder (CLIENT_IDENTIFIER), when it
        has one, so a standby can end them if this process freezes while it leads
        (``flightstate_oracle.takeover``); an operator command's sessions keep the default."""
        holder = self._settings.holder
        return self._where if holder is None else for_holder(self._where, holder)

    def store(self, *, cache: bool = True) -> OracleStore:
        """A store on the shared pool (Oracle keeps no writer cache: *cache* is moot)."""
        return OracleStore(self.pool(), self._settings.config,
                           inbox_name=self._settings.inbox_name)  # fmt: skip

    def lease(self) -> OracleLeaderLease:
        """A lease handle of this process's instance."""
        return OracleLeaderLease(self.pool(), instance=self._settings.instance)

    def outbox(self) -> OracleOutbox:
        """The outbox on the shared pool."""
        return OracleOutbox(self.pool())

    def queries(self) -> OracleQueries:
        """Operator queries on the shared pool."""
        return OracleQueries(self.pool(), self._settings.config,
                             inbox_name=self._settings.inbox_name)  # fmt: skip

    def inbox(self, table: str, *, local_tz: str, received_tz: str | None, read_bytes: int,
              message_bytes: int) -> Inbox:  # fmt: skip
        """Refused: see the module docstring."""
        raise ConfigError(f"inbox_table: {_NO_INBOX}")

    def insert_inbox(self, raws: Sequence[str], table: str, *,
                     received_tz: str | None) -> list[int]:  # fmt: skip
        """Refused: see the module docstring."""
        raise ConfigError(f"inbox_table: {_NO_INBOX}")

    def migrate(self) -> list[str]:
        """Apply pending migrations (0005_runner_tables is the runner's)."""
        return migrate(self._url)

    def schema_missing(self) -> str | None:
        """A flightstate table the schema lacks, or None."""
        return self.queries().schema_missing()

    def failure(self, exc: BaseException) -> StoreFailure:
        """See ``failure_of``."""
        return failure_of(exc)

    def checks(self, waits: SessionWaits) -> list[Check]:
        """``flightstate_oracle.preflight.store_checks`` on this schema, and who leads. The
        *waits* are the pool's own settings here, nothing the server holds to compare."""
        found = store_checks(lambda: connect(self._session_settings(),
                                             self._settings.client_dir or None),
                             self._where.dsn)  # fmt: skip
        if found[-1].name == "store schema" and found[-1].ok:
            found.append(leader_check(self.lease().status()))
        return found

    def close(self) -> None:
        """Close the shared pool (idempotent)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            with translated():
                pool.close(force=True)


def _named(exc: FlightstateError, where: str) -> FlightstateError:
    """*exc* in one line naming the server (a TransientError keeps its code)."""
    text = f"Oracle at {where}: {_first_line(exc)}"
    if isinstance(exc, TransientError):
        return TransientError(text, code=exc.code, store_wide=exc.store_wide)
    return type(exc)(text)


def check_dsn(dsn: str) -> None:
    """``ValueError`` unless *dsn* is ``oracle://user:password@host:port/service``."""
    try:
        parse_oracle_url(dsn)
    except ConfigError as exc:
        raise ValueError(str(exc).removeprefix("oracle URL: ")) from None


def open_backend(dsn: str, settings: BackendSettings) -> OracleBackend:
    """The Oracle backend on *dsn*; ``ConfigError`` in one line without Oracle Client."""
    return OracleBackend(dsn, settings)


if TYPE_CHECKING:  # mypy proves the factory and its backend conform to the port
    _OPENER: BackendOpener = open_backend

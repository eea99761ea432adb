"""``open_backend``: PostgreSQL as the runner's ``StoreBackend`` (``flightstate_core.ports``).

Why here: the runner picks this module by the store DSN's scheme (``postgresql://``) and
then only calls the port, so every PostgreSQL detail stays in this package: sessions with
bounded waits and the holder's ``application_name`` (``session``), migrations, the
store-side inbox table of a lab setup (``inbox``), and what a psycopg failure means.
Nothing connects before a call needs it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

import psycopg
from psycopg.conninfo import conninfo_to_dict

from flightstate_core.domain.errors import TransientError
from flightstate_core.engine.budget import ReadBudget
from flightstate_core.ports import (
    BackendOpener,
    BackendSettings,
    Inbox,
    Outbox,
    SessionWaits,
    StoreFailure,
)
from flightstate_core.support.preflight import Check
from flightstate_pg._errors import translated
from flightstate_pg.inbox import PgInbox, create_inbox_table, insert_messages
from flightstate_pg.lease import PgLeaderLease
from flightstate_pg.migrate import migrate
from flightstate_pg.outbox import PgOutbox
from flightstate_pg.preflight import store_checks
from flightstate_pg.queries import PgQueries
from flightstate_pg.session import SessionLimits, holder_application_name, with_session_limits
from flightstate_pg.store import PgStore

__all__ = ["PgBackend", "check_dsn", "failure_of", "open_backend"]

#: libpq's words for a server that answered and refused this login (no SQLSTATE then).
_REFUSED_WORDS: Final = ("authentication failed", "password", "does not exist", "no pg_hba")


def failure_of(exc: BaseException) -> StoreFailure:
    """UNREACHABLE for a connection that never opened or broke, REFUSED for a login the
    server refused (class 28, an unknown database, or libpq's words for it), else OTHER."""
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            break
        if isinstance(seen, psycopg.Error):
            state = seen.sqlstate or ""
            text = str(seen).lower()
            if state.startswith("28") or state == "3D000":
                return StoreFailure.REFUSED
            if not state and isinstance(seen, psycopg.OperationalError):
                refused = any(word in text for word in _REFUSED_WORDS)
                return StoreFailure.REFUSED if refused else StoreFailure.UNREACHABLE
            return StoreFailure.UNREACHABLE if state.startswith("08") else StoreFailure.OTHER
        seen = seen.__cause__ or seen.__context__
    if isinstance(exc, TransientError) and exc.store_wide:
        return StoreFailure.UNREACHABLE
    return StoreFailure.OTHER


def _session_dsn(dsn: str, settings: BackendSettings) -> str:
    """*dsn* with the bounded waits and ``application_name`` = the lease holder (a standby
    ends a frozen leader's sessions by it); without waits (an operator command) as given."""
    if settings.waits is None:
        return dsn
    app = holder_application_name(settings.holder) if settings.holder else ""
    return with_session_limits(dsn, _limits(settings.waits), application_name=app)


def _limits(waits: SessionWaits) -> SessionLimits:
    return SessionLimits(lock_timeout=waits.lock_timeout,
                         idle_in_transaction=waits.idle_in_transaction,
                         statement_timeout=waits.statement_timeout,
                         keepalive_idle=waits.keepalive_idle)  # fmt: skip


class PgBackend:
    """The adapters of one runner process on one PostgreSQL database."""

    kind = "postgresql"

    def __init__(self, dsn: str, settings: BackendSettings) -> None:
        self.given_dsn = dsn
        #: Every session of this process: with waits, bounded and named after the holder.
        self.dsn = _session_dsn(dsn, settings)
        self._settings = settings

    def store(self, *, cache: bool = True) -> PgStore:
        """A store on its own pool. No NOTIFY: the runner's dispatcher is woken in-process
        by the pump's commits and listens to nothing, so a NOTIFY per commit would be a
        round trip and a commit-time lock on the notification queue for no reader."""
        return PgStore(self.dsn, self._settings.config, inbox_name=self._settings.inbox_name,
                       notify_channel=None, state_cache_size=20_000 if cache else 0)  # fmt: skip

    def lease(self) -> PgLeaderLease:
        """A lease handle (own connection) of this process's instance."""
        return PgLeaderLease(self.dsn, instance=self._settings.instance)

    def outbox(self) -> Outbox:
        """The outbox (own connections)."""
        return PgOutbox(self.dsn)

    def queries(self) -> PgQueries:
        """Operator queries (one kept connection)."""
        return PgQueries(self.dsn, self._settings.config, inbox_name=self._settings.inbox_name)

    def inbox(self, table: str, *, local_tz: str, received_tz: str | None, read_bytes: int,
              message_bytes: int) -> Inbox:  # fmt: skip
        """The PostgreSQL inbox table *table* in the store database."""
        return PgInbox(self.dsn, table=table, local_tz=local_tz,
                       budget=ReadBudget(read_bytes, message_bytes),
                       received_tz=received_tz)  # fmt: skip

    def insert_inbox(self, raws: Sequence[str], table: str, *,
                     received_tz: str | None) -> list[int]:  # fmt: skip
        """Create *table* if missing and insert *raws* (one transaction); their ids."""
        with translated(f"inbox table {table}"), psycopg.connect(self.given_dsn) as conn:
            create_inbox_table(conn, table)
            if not raws:
                return []
            return insert_messages(conn, list(raws), table=table, local_tz=received_tz)

    def migrate(self) -> list[str]:
        """Apply pending migrations (0005 is the runner's tables)."""
        with translated("migrate"):
            return migrate(self.given_dsn)

    def schema_missing(self) -> str | None:
        """A flightstate table the database lacks, or None."""
        queries = self.queries()
        try:
            return queries.schema_missing()
        finally:
            queries.close()

    def failure(self, exc: BaseException) -> StoreFailure:
        """See ``failure_of``."""
        return failure_of(exc)

    def checks(self, waits: SessionWaits) -> list[Check]:
        """``flightstate_pg.preflight.store_checks`` with *waits* as the runner sets them."""
        return store_checks(self.given_dsn, _limits(waits))

    def close(self) -> None:
        """Nothing shared to close: each adapter has its own connections."""


def check_dsn(dsn: str) -> None:
    """``ValueError`` unless libpq parses *dsn* (checked without connecting)."""
    try:
        conninfo_to_dict(dsn)
    except psycopg.Error:  # its text may quote the DSN: not shown
        raise ValueError(
            "not a postgresql:// URL nor a key=value conninfo (e.g. postgresql://user@host:5432/db)"
        ) from None


def open_backend(dsn: str, settings: BackendSettings) -> PgBackend:
    """The PostgreSQL backend on *dsn* (a libpq URL or key=value conninfo)."""
    return PgBackend(dsn, settings)


if TYPE_CHECKING:  # mypy proves the factory and its backend conform to the port
    _OPENER: BackendOpener = open_backend

"""Bounded waits for every PostgreSQL session of a runner: a DSN that carries them.

Why in the DSN: the store's pool, the lease, the outbox channels, the PG-table inbox and the
probes each open their own connections; putting the limits into the connection string
(libpq ``options`` and keepalive parameters) bounds all of them at once, server side, from
the first statement of the session, without every adapter repeating ``SET`` statements.

- ``lock_timeout``: no statement waits longer for a row lock (the lease row, PIPELINE_LOCK
  FOR UPDATE): a standby behind a frozen leader's lock gets 55P03 (transient) and retries.
- ``idle_in_transaction_session_timeout``: the server ends a session that sits inside a
  transaction without sending anything (a leader frozen by SIGSTOP or a VM pause, or cut off
  by a partition without a reset), which releases its locks. The woken ex-leader finds its
  connection gone: its transaction never commits.
- ``statement_timeout``: the same for a statement that does not end (e.g. a server blocked
  writing results to a client that stopped reading).
- TCP keepalives (client side; ``tcp_user_timeout`` where the platform has it) and the
  server's ``tcp_keepalives_*`` for the same session: a dead peer is noticed in seconds, not
  after the kernel's two-hour default.
"""

from __future__ import annotations

import math

from attrs import frozen
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from flightstate_core.domain.errors import ConfigError
from flightstate_core.engine.lease_identity import SEPARATOR, split_holder

__all__ = ["SessionLimits", "holder_application_name", "with_session_limits"]

_MAX_SECONDS = 24 * 3600.0  # anything longer is a typo, not a limit
_APP_NAME_BYTES = 63  # PostgreSQL keeps NAMEDATALEN - 1 bytes of application_name


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


@frozen
class SessionLimits:
    """Seconds; 0 turns a limit off (PostgreSQL's own meaning of 0)."""

    lock_timeout: float = 3.0
    idle_in_transaction: float = 10.0
    statement_timeout: float = 20.0
    keepalive_idle: float = 10.0

    def __attrs_post_init__(self) -> None:
        for name in ("lock_timeout", "idle_in_transaction", "statement_timeout",
                     "keepalive_idle"):  # fmt: skip
            value = getattr(self, name)
            if not math.isfinite(value) or not 0 <= value <= _MAX_SECONDS:
                raise ConfigError(f"{name}: must be finite, 0..{_MAX_SECONDS:.0f} s, got {value!r}")

    def server_options(self) -> str:
        """The libpq ``options`` text (``-c name=value`` per setting)."""
        settings = {
            "lock_timeout": _ms(self.lock_timeout) if self.lock_timeout else 0,
            "idle_in_transaction_session_timeout": (
                _ms(self.idle_in_transaction) if self.idle_in_transaction else 0
            ),
            "statement_timeout": _ms(self.statement_timeout) if self.statement_timeout else 0,
        }
        if self.keepalive_idle:
            idle = max(1, round(self.keepalive_idle))
            settings.update(tcp_keepalives_idle=idle, tcp_keepalives_interval=max(1, idle // 2),
                            tcp_keepalives_count=3)  # fmt: skip
        return " ".join(f"-c {name}={value}" for name, value in settings.items())

    def client_params(self) -> dict[str, int]:
        """libpq keepalive parameters of the client socket."""
        if not self.keepalive_idle:
            return {}
        idle = max(1, round(self.keepalive_idle))
        interval = max(1, idle // 2)
        return {
            "keepalives": 1,
            "keepalives_idle": idle,
            "keepalives_interval": interval,
            "keepalives_count": 3,
            "tcp_user_timeout": (idle + 3 * interval) * 1000,
        }


def holder_application_name(holder: str) -> str:
    """The ``application_name`` of every session a lease *holder* opens: the lease finds a
    frozen ex-leader's sessions by it (``PgLeaderLease``).

    *holder* is the lease row's ``name#instance``; a long name is cut, never the instance,
    so that a standby ends the expired instance's sessions only (PostgreSQL keeps 63 bytes).
    """
    name, instance = split_holder(holder)
    suffix = f"{SEPARATOR}{instance}" if instance else ""
    head = f"flightstate {name}".encode()[: _APP_NAME_BYTES - len(suffix.encode())]
    return head.decode(errors="ignore") + suffix


def with_session_limits(dsn: str, limits: SessionLimits, *, application_name: str = "") -> str:
    """*dsn* (URL or key=value) with *limits* added; options already in it are kept and
    win (they come last), so an operator can still override one setting per DSN."""
    given = conninfo_to_dict(dsn)
    options = " ".join(str(part) for part in (limits.server_options(), given.get("options"))
                       if part)  # fmt: skip
    extra: dict[str, str | int] = {
        k: v for k, v in limits.client_params().items() if k not in given
    }
    if application_name and "application_name" not in given:
        extra["application_name"] = application_name[:63]
    return make_conninfo(dsn, options=options, **extra)

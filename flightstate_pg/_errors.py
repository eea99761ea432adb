"""The one choke point where psycopg exceptions become core errors.

Why: the pump decides retry versus DEAD from core types only (``TransientError`` waits and
retries the head message, ``PermanentError`` does not). Every public entry point of this
package runs its driver calls under :func:`translated`; nothing else catches ``psycopg.Error``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

import psycopg

from flightstate_core.domain.errors import (
    FlightstateError,
    PermanentError,
    TransientError,
    prefixed,
)

__all__ = ["DISCARD_CODES", "classify", "discard_after", "translated"]

# SQLSTATE classes/codes a retry can cure: connection exceptions (08), serialization
# failure / deadlock (40), insufficient resources (53), operator intervention (57:
# admin shutdown = pg_terminate_backend, crash shutdown, cannot connect now (in recovery),
# query cancelled by statement_timeout), lock not available (55P03, lock_timeout), system
# errors (58). Also a read-only store (25006: a failover to a standby not yet promoted) and a
# session ended by idle_in_transaction_session_timeout (25P03): the store comes back.
_TRANSIENT_CLASSES: Final = ("08", "40", "53", "57", "58")
_TRANSIENT_CODES: Final = frozenset({"55P03", "55006", "25006", "25P03"})
#: SQLSTATEs of the store or the session, never of one statement: the session ended or
#: never began (shut down, terminated, starting up, ended for idling in a transaction) or
#: the store is read-only. Like a connection error without SQLSTATE (and class 08) they say
#: nothing about the message, so the pump's retry budget does not count them.
_STORE_WIDE_CODES: Final = frozenset({"57P01", "57P02", "57P03", "25P03", "25006"})
#: SQLSTATEs after which a connection is closed, not reused: its session defaults (read
#: only) or its server (a standby) will not change under it.
DISCARD_CODES: Final = frozenset({"25006", "25P03"})


def classify(exc: psycopg.Error) -> FlightstateError:
    """The core error for one driver exception (not raised; the caller chains it)."""
    state = exc.sqlstate
    if state is not None:
        if state[:2] in _TRANSIENT_CLASSES or state in _TRANSIENT_CODES:
            wide = state[:2] == "08" or state in _STORE_WIDE_CODES
            return TransientError(f"PostgreSQL {state}: {_first_line(exc)}", code=state,
                                  store_wide=wide)  # fmt: skip
        return PermanentError(f"PostgreSQL {state}: {_first_line(exc)}")
    if isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)):
        # No SQLSTATE: the connection broke (server gone, socket closed, backend killed),
        # or (InterfaceError) a closed connection or cursor was used. Both are transient:
        # every adapter drops its connection after an error and reconnects on the retry,
        # so the retry runs on a new session; and a retry that keeps failing stalls the
        # pump visibly instead of recording a good message DEAD for a client-side fault.
        return TransientError(f"PostgreSQL connection: {_first_line(exc)}",
                              store_wide=True)  # fmt: skip
    return PermanentError(f"PostgreSQL: {_first_line(exc)}")


def discard_after(exc: BaseException | None) -> bool:
    """Whether the connection that raised *exc* (a driver error, or a core error raised
    from one) must be closed rather than reused."""
    seen = 0
    while exc is not None and seen < 5:  # noqa: PLR2004 - a short cause chain
        if isinstance(exc, psycopg.Error) and exc.sqlstate in DISCARD_CODES:
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


@contextmanager
def translated(what: str = "") -> Iterator[None]:
    """Run a block; any ``psycopg.Error`` leaves it as a core error (``raise ... from``),
    its message prefixed with *what* was being done when given."""
    try:
        yield
    except psycopg.Error as exc:
        error = classify(exc)
        raise prefixed(error, what) from exc


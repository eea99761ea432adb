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

from flightstate_core.errors import FlightstateError, PermanentError, TransientError

__all__ = ["classify", "translated"]

# SQLSTATE classes/codes a retry can cure: connection exceptions (08), serialization
# failure / deadlock (40), insufficient resources (53), operator intervention (57:
# admin shutdown = pg_terminate_backend, crash shutdown, cannot connect now, query
# cancelled), lock not available (55P03), system errors (58).
_TRANSIENT_CLASSES: Final = ("08", "40", "53", "57", "58")
_TRANSIENT_CODES: Final = frozenset({"55P03", "55006"})


def classify(exc: psycopg.Error) -> FlightstateError:
    """The core error for one driver exception (not raised; the caller chains it)."""
    state = exc.sqlstate
    if state is not None:
        if state[:2] in _TRANSIENT_CLASSES or state in _TRANSIENT_CODES:
            return TransientError(f"PostgreSQL {state}: {_first_line(exc)}")
        return PermanentError(f"PostgreSQL {state}: {_first_line(exc)}")
    if isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)):
        # No SQLSTATE: the connection broke (server gone, socket closed, backend killed).
        return TransientError(f"PostgreSQL connection: {_first_line(exc)}")
    return PermanentError(f"PostgreSQL: {_first_line(exc)}")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


@contextmanager
def translated() -> Iterator[None]:
    """Run a block; any ``psycopg.Error`` leaves it as a core error (``raise ... from``)."""
    try:
        yield
    except psycopg.Error as exc:
        raise classify(exc) from exc

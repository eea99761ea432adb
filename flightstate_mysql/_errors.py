"""The one place where PyMySQL exceptions become core errors.

Why by error code and not by class: PyMySQL maps every server error it does not know to
``OperationalError`` (an unknown column is one), so the class alone cannot tell "server gone,
retry" from "schema wrong, retrying will not help". Connection-level failures (client codes
2002-2013, server shutdown, deadlock, lock wait timeout, too many connections) and socket
errors are transient; everything else is permanent.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pymysql

from flightstate_core.domain.errors import PermanentError, TransientError

__all__ = ["TRANSIENT_CODES", "describe", "is_transient", "translated"]

#: Server and client error codes that a retry (usually after reconnecting) may cure.
TRANSIENT_CODES = frozenset(
    {
        1040,  # ER_CON_COUNT_ERROR: too many connections
        1053,  # ER_SERVER_SHUTDOWN
        1205,  # ER_LOCK_WAIT_TIMEOUT
        1213,  # ER_LOCK_DEADLOCK
        1317,  # ER_QUERY_INTERRUPTED
        1927,  # ER_CONNECTION_KILLED (MariaDB)
        2002,  # CR_CONNECTION_ERROR (socket)
        2003,  # CR_CONN_HOST_ERROR: connection refused
        2006,  # CR_SERVER_GONE_ERROR
        2013,  # CR_SERVER_LOST
        2014,  # CR_COMMANDS_OUT_OF_SYNC (after a dropped connection)
        2055,  # CR_SERVER_LOST_EXTENDED
        4031,  # ER_CLIENT_INTERACTION_TIMEOUT
    }
)


def is_transient(exc: BaseException) -> bool:
    """Whether *exc* (a PyMySQL or socket error) may succeed on retry."""
    if isinstance(exc, (pymysql.err.InterfaceError, OSError)):
        return True
    if isinstance(exc, pymysql.MySQLError) and exc.args:
        code = exc.args[0]
        return isinstance(code, int) and code in TRANSIENT_CODES
    return False


def describe(exc: BaseException) -> str:
    """*exc* in words: ``MySQL error 1045: Access denied ...`` rather than the driver's
    tuple ``(1045, "Access denied ...")``."""
    args = exc.args
    if isinstance(exc, pymysql.MySQLError) and len(args) == 2 and isinstance(args[0], int):  # noqa: PLR2004
        return f"MySQL error {args[0]}: {args[1]}"
    return str(exc) or type(exc).__name__


@contextmanager
def translated(what: str) -> Iterator[None]:
    """Translate driver errors raised inside into TransientError / PermanentError."""
    try:
        yield
    except (pymysql.MySQLError, OSError) as exc:
        if is_transient(exc):
            raise TransientError(f"{what}: {describe(exc)}") from exc
        raise PermanentError(f"{what}: {describe(exc)}") from exc

"""Core error classes.

Every adapter translates its driver's exceptions into these at one choke point, so the
pump decides retry versus DEAD from core types only.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "FlightstateError",
    "LeadershipLost",
    "PermanentError",
    "ProtocolError",
    "TransientError",
    "prefixed",
]


class FlightstateError(Exception):
    """Base class of every error flightstate raises on purpose."""


class ProtocolError(FlightstateError):
    """A message breaks the SIS protocol. The message becomes DEAD; the FIFO moves on.

    ``xpath`` names the offending element (or attribute, as ``.../@ATTR``).
    """

    def __init__(self, xpath: str, reason: str) -> None:
        super().__init__(f"{xpath}: {reason}")
        self.xpath = xpath
        self.reason = reason

    def __reduce__(self) -> tuple[type[ProtocolError], tuple[str, str]]:
        return (ProtocolError, (self.xpath, self.reason))


class TransientError(FlightstateError):
    """A database or network failure that may succeed on retry (the head message waits).

    ``code``: the server's code for it where it gave one (a PostgreSQL SQLSTATE such as
    ``40P01``, an Oracle ``ORA-00060``), for the reason of a message the retry budget ends.
    ``store_wide``: the failure is the store's or the session's, never one message's (the
    session was lost or never opened, the server is shutting down or starting, the store is
    read-only), so the pump's retry budget never counts it (docs/design.md, "A retry budget
    for the head message")."""

    def __init__(
        self, message: str = "", *, code: str | None = None, store_wide: bool = False
    ) -> None:
        super().__init__(message)
        self.code = code
        self.store_wide = store_wide

    def __reduce__(self) -> tuple[object, ...]:
        return (_transient, (type(self), str(self), self.code, self.store_wide))


class PermanentError(FlightstateError):
    """A failure that retrying cannot fix (bad schema, constraint the data can never meet)."""


class LeadershipLost(TransientError):
    """This pump's fencing token (epoch) is stale: another pump leads; commit refused."""


class ConfigError(FlightstateError):
    """Configuration is invalid; raised on start with a message naming the setting."""


def _transient(
    kind: type[TransientError], message: str, code: str | None, store_wide: bool
) -> TransientError:
    """Unpickle a ``TransientError`` (or subclass) with its keyword attributes."""
    return kind(message, code=code, store_wide=store_wide)


def prefixed(error: FlightstateError, what: str) -> FlightstateError:
    """*error* with its text prefixed by *what* was being done (a transient one keeps its
    code and reach): how each adapter's ``translated(what)`` names the operation."""
    if not what:
        return error
    if isinstance(error, TransientError):
        return TransientError(f"{what}: {error}", code=error.code,
                              store_wide=error.store_wide)  # fmt: skip
    return type(error)(f"{what}: {error}")

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
    """A database or network failure that may succeed on retry (the head message waits)."""


class PermanentError(FlightstateError):
    """A failure that retrying cannot fix (bad schema, constraint the data can never meet)."""


class LeadershipLost(TransientError):
    """This pump's fencing token (epoch) is stale: another pump leads; commit refused."""


class ConfigError(FlightstateError):
    """Configuration is invalid; raised on start with a message naming the setting."""

"""Free TCP ports on the loopback for the private servers the fixtures start (re-exported
from ``flightstate_core.support.net``, which the runner's demo uses too)."""

from __future__ import annotations

from flightstate_core.support.net import PORT_RANGE, free_local_port

__all__ = ["PORT_RANGE", "free_local_port"]

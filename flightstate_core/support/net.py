"""Free TCP ports on the loopback, for the private servers the runner's demo and the test
fixtures start.

Why in ``support``: the demo (production code) needs one as much as the fixtures do, and
production code does not import the test toolkit; ``flightstate_testing.ports`` re-exports.
"""

from __future__ import annotations

import random
import socket

__all__ = ["PORT_RANGE", "free_local_port"]

# Below Linux's ephemeral range (32768+), so a client socket never holds our port between a
# stop() and the restart() that must get the same port back.
PORT_RANGE = (20000, 32767)


def free_local_port() -> int:
    """A port in ``PORT_RANGE`` that nothing on 127.0.0.1 listens on right now."""
    for _ in range(100):
        port = random.randint(*PORT_RANGE)  # noqa: S311 - a port, not a secret
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free TCP port in {PORT_RANGE}")

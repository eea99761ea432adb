"""Requeue on Oracle (``flightstate_core.ports.DeadMessages``): take a DEAD message's
PROC_STATE row back in the caller's locked transaction. The Oracle schema keeps no
requeue audit table (PostgreSQL's RUNNER_REQUEUE belongs to the runner's migration), so
the claim carries no audit id and completing it writes nothing."""

from __future__ import annotations

import oracledb

from flightstate_core.ports import DeadClaim
from flightstate_oracle import _sql as sql
from flightstate_oracle._db import query, run

__all__ = ["claim_dead"]


def claim_dead(conn: oracledb.Connection, message_id: int) -> DeadClaim | None:
    """Delete the DEAD PROC_STATE row of *message_id*; None if it is not DEAD."""
    params = {"MESSAGE_ID": message_id}
    rows = query(conn, sql.DEAD_PROC, params)
    if not rows:
        return None
    run(conn, sql.DEAD_PROC_DELETE, params)
    reason, attempts = rows[0]["REASON"], rows[0]["ATTEMPTS"]
    if not isinstance(attempts, (int, float)):  # NUMBER(10): a Python int from the driver
        raise TypeError(f"PROC_STATE.ATTEMPTS is a {type(attempts).__name__}")
    return DeadClaim(message_id, None if reason is None else str(reason), int(attempts))

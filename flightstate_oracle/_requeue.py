"""Requeue on Oracle (``flightstate_core.ports.DeadMessages``): take a DEAD message's
PROC_STATE row back and audit it in RUNNER_REQUEUE (migration 0005), in the caller's
locked transaction, as PostgreSQL does."""

from __future__ import annotations

import oracledb

from flightstate_core.domain.decision import Outcome
from flightstate_core.ports import DeadClaim
from flightstate_oracle import _sql as sql
from flightstate_oracle._db import query, run

__all__ = ["claim_dead", "requeue_done"]


def claim_dead(conn: oracledb.Connection, message_id: int) -> DeadClaim | None:
    """Delete the DEAD PROC_STATE row of *message_id* and write its audit row; None if the
    message is not DEAD (nothing changed)."""
    params = {"MESSAGE_ID": message_id}
    rows = query(conn, sql.DEAD_PROC, params)
    if not rows:
        return None
    run(conn, sql.DEAD_PROC_DELETE, params)
    reason, attempts = rows[0]["REASON"], rows[0]["ATTEMPTS"]
    if not isinstance(attempts, (int, float)):  # NUMBER(10): a Python int from the driver
        raise TypeError(f"PROC_STATE.ATTEMPTS is a {type(attempts).__name__}")
    audit_id = int(str(query(conn, sql.REQUEUE_ID)[0]["REQUEUE_ID"]))
    previous = None if reason is None else str(reason)
    run(conn, sql.REQUEUE_AUDIT, {"REQUEUE_ID": audit_id, "MESSAGE_ID": message_id,
                                  "PREVIOUS_REASON": previous,
                                  "PREVIOUS_ATTEMPTS": int(attempts)})  # fmt: skip
    return DeadClaim(message_id, previous, int(attempts), audit_id)


def requeue_done(conn: oracledb.Connection, claim: DeadClaim, status: Outcome) -> None:
    """Record the requeue's new outcome in its audit row."""
    if claim.audit_id is not None:
        run(conn, sql.REQUEUE_AUDIT_DONE, {"NEW_STATUS": status.value,
                                           "REQUEUE_ID": claim.audit_id})  # fmt: skip

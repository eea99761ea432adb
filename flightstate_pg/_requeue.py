"""Requeue on PostgreSQL (``flightstate_core.ports.DeadMessages``): take a DEAD message's
PROC_STATE row back and audit it in RUNNER_REQUEUE (migration 0005), in the caller's
locked transaction."""

from __future__ import annotations

from typing import Any, Final

import psycopg

from flightstate_core.domain.decision import Outcome
from flightstate_core.ports import DeadClaim

__all__ = ["claim_dead", "requeue_done"]

_TAKE_DEAD: Final = (
    "DELETE FROM PROC_STATE WHERE MESSAGE_ID = %s AND STATUS = 'DEAD' RETURNING REASON, ATTEMPTS"
)
_AUDIT: Final = (
    "INSERT INTO RUNNER_REQUEUE (MESSAGE_ID, PREVIOUS_STATUS, PREVIOUS_REASON, PREVIOUS_ATTEMPTS)"
    " VALUES (%s, 'DEAD', %s, %s) RETURNING REQUEUE_ID"
)
_AUDIT_DONE: Final = "UPDATE RUNNER_REQUEUE SET NEW_STATUS = %s WHERE REQUEUE_ID = %s"


def claim_dead(conn: psycopg.Connection[Any], message_id: int) -> DeadClaim | None:
    """Delete the DEAD PROC_STATE row of *message_id* and write its audit row; None if the
    message is not DEAD (nothing changed)."""
    row = conn.execute(_TAKE_DEAD, (message_id,)).fetchone()
    if row is None:
        return None
    reason, attempts = row[0], int(row[1])
    audit = conn.execute(_AUDIT, (message_id, reason, attempts)).fetchone()
    return DeadClaim(message_id, reason, attempts, int(audit[0]) if audit else None)


def requeue_done(conn: psycopg.Connection[Any], claim: DeadClaim, status: Outcome) -> None:
    """Record the requeue's new outcome in its audit row."""
    if claim.audit_id is not None:
        conn.execute(_AUDIT_DONE, (status.value, claim.audit_id))

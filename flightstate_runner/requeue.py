"""``requeue MESSAGE_ID``: apply a DEAD message once more, after its cause was fixed.

The requeue itself is the core's (``flightstate_core.engine.requeue.requeue_dead``: one locked
unit of work that claims the DEAD PROC_STATE row, audited in RUNNER_REQUEUE by the
store, and applies the message as the pump would, with ``attempts`` = old + 1,
SCHD RESP matching included). This command finds the row in the inbox, runs it, and
writes the new outcome back to the inbox row (or leaves that to the pump's backfill).
"""

from __future__ import annotations

from datetime import UTC, datetime

from attrs import frozen

from flightstate_core.domain.errors import FlightstateError
from flightstate_core.domain.records import ProcessedMessage
from flightstate_core.engine.requests import schedule_response_hook
from flightstate_core.engine.requeue import RequeueRefused, requeue_dead
from flightstate_runner.probes import ensure_runner_tables
from flightstate_runner.wiring import Services

__all__ = ["RequeueRefused", "RequeueResult", "requeue"]


@frozen
class RequeueResult:
    """What the requeue did."""

    message_id: int
    previous_reason: str | None
    previous_attempts: int
    processed: ProcessedMessage
    backfilled: bool


def _backfill(services: Services, processed: ProcessedMessage) -> bool:
    if processed.backfill is None:
        return True
    try:
        services.inbox.backfill([processed.backfill])
        services.store.mark_backfilled([processed.proc.message_id], datetime.now(UTC))
    except FlightstateError:
        return False  # still PENDING in PROC_STATE: the pump's backfill writes it later
    return True


def requeue(services: Services, message_id: int) -> RequeueResult:
    """Re-apply DEAD message *message_id* (see the module docstring)."""
    rows = services.inbox.read_after(message_id - 1, 1)
    if not rows or rows[0].message_id != message_id:
        raise RequeueRefused(f"message {message_id} is not in the inbox")
    queries = services.backend.queries()
    try:
        ensure_runner_tables(queries)  # the audit table (the runner tables' migration)
    finally:
        queries.close()
    config = services.config.core()
    done = requeue_dead(services.store, rows[0], config, now=datetime.now(UTC),
                        after_save=schedule_response_hook(config))  # fmt: skip
    claim, processed = done.claim, done.processed
    return RequeueResult(message_id, claim.reason, claim.attempts, processed,
                         _backfill(services, processed))  # fmt: skip

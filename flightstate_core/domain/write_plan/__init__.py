"""The backend-neutral write plan of a ``save``/``save_many`` (pure: no driver, no I/O).

Every store writes a batch the same way, so the decisions live here once and the
PostgreSQL and Oracle writers only turn them into statements:

- ``validation``: what the tables cannot give back identically is refused
  (``PermanentError`` naming the flight, element and position);
- ``documents``: the JSON text of a document column, and its one rule for repeated keys;
- ``typed``: the typed twin of a raw value (airport zone, century pivot);
- ``plan``: the final state of each flight, which detail tables change per FLID, the
  backfill-intent check, the inbox cursor, the gap rows, and the ordered write steps
  (``WRITE_STEPS``, ``run_steps``).
"""

from __future__ import annotations

from flightstate_core.domain.write_plan.documents import decode_document, encode_document
from flightstate_core.domain.write_plan.plan import (
    WRITE_STEPS,
    DetailChange,
    StepWriter,
    WritePlan,
    check_intent,
    final_states,
    gaps_to_write,
    late_ids,
    payload_text,
    plan_writes,
    run_steps,
    snap_texts,
    stamp_texts,
)
from flightstate_core.domain.write_plan.typed import TypedValues, typed_twin
from flightstate_core.domain.write_plan.validation import validate

__all__ = [
    "WRITE_STEPS",
    "DetailChange",
    "StepWriter",
    "TypedValues",
    "WritePlan",
    "check_intent",
    "decode_document",
    "encode_document",
    "final_states",
    "gaps_to_write",
    "late_ids",
    "payload_text",
    "plan_writes",
    "run_steps",
    "snap_texts",
    "stamp_texts",
    "typed_twin",
    "validate",
]

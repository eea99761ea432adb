"""The Kafka wire format: ``schd`` (full state of one flight) and ``msg`` (notification).

``wire(state, config)`` is a pure function of the state (and the zone used to type raw
times); the handlers build every ``schd`` payload with it from the next state and nothing
else, so the outbox and the database can never disagree (docs/design.md, "Wire format").
Key order is fixed: envelope keys, scalars in catalog order (a ``_TS`` twin after each
TIME), the exception objects FDIV/FRET/FLAB, every collection (``[]`` when absent, every
child key present, typed twins after typed children), then the documents. The key plans are
computed once from the catalog at import; times are typed through an LRU cache because the
same raw strings recur across a schedule package.
"""

from __future__ import annotations

from collections.abc import Sequence

from flightstate_core.domain._wire_text import renderer
from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.state import FlightState
from flightstate_core.domain.wire_plan import (
    ENVELOPE_KEYS,
    WIRE_KEYS,
    json_text,
    to_json,
    wire_object,
)

__all__ = ["ENVELOPE_KEYS", "WIRE_KEYS", "notification", "to_json", "wire", "wire_object"]


def wire(state: FlightState, config: CoreConfig) -> bytes:
    """The ``schd`` payload of a flight state (docs/design.md, wire format)."""
    return renderer(config.airport_tz.key, config.century_pivot).render(state).encode("utf-8")


def notification(
    *,
    flid: str,
    state_version: int,
    change: str,
    changed: Sequence[str],
    message_id: int | None,
    type_: str,
    styp: str,
    codeshare: str | None = None,
) -> bytes:
    """The ``msg`` payload: a change notification, not authoritative state."""
    # Written directly (same bytes as to_json of the dict, in this key order).
    text = (
        f'{{"flid":{json_text(flid)},"stateVersion":{json_text(state_version)},'
        f'"change":{json_text(change)},"changed":[{",".join(map(json_text, changed))}],'
        f'"messageId":{json_text(message_id)},"type":{json_text(type_)},"styp":{json_text(styp)}'
    )
    if codeshare is not None:
        text += f',"codeshare":{json_text(codeshare)}'
    return (text + "}").encode("utf-8")

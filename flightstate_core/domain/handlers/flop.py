"""FLOP: one dynamic update per block (docs/protocol.md §7).

Each block is checked against ``rules.FLOP_RULES[styp]`` (rule R4): it carries only the
keys of its subtype (plus FFID) and at least one of them, else ProtocolError. FDEL
deletes; every other subtype overlays under rule FLOP. An unknown FLID is created
(OPERATION_DAY NULL, never derived by a FLOP); a DELETED flight is not changed (noted).
"""

from __future__ import annotations

from collections.abc import Mapping

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import Decision, DecisionContext
from flightstate_core.domain.errors import ProtocolError
from flightstate_core.domain.handlers._apply import overlay
from flightstate_core.domain.handlers._draft import Draft, new_state
from flightstate_core.domain.handlers._finish import finish
from flightstate_core.domain.handlers.deletion import delete_flid
from flightstate_core.domain.handlers.schedule import check_flid
from flightstate_core.domain.messages import FlightRecord, FlopMessage
from flightstate_core.domain.rules import DELETE_KEY, FLOP, FLOP_RULES, FlopRule
from flightstate_core.domain.state import FlightState

__all__ = ["carried_keys", "handle_flop"]

_ALWAYS_ALLOWED = frozenset({"FFID"})


def carried_keys(record: FlightRecord) -> set[str]:
    """Every record key a block carries (scalar codes, collections, documents, ...)."""
    keys = set(record.scalars) | set(record.collections) | set(record.documents)
    keys.update(update.kind for update in record.stand_updates)
    if record.delete:
        keys.add(DELETE_KEY)
    return keys


def _check_block(rule: FlopRule, record: FlightRecord, index: int) -> None:
    xpath = record.xpath or f"/MSG/FLOP[{index}]"
    keys = carried_keys(record) - _ALWAYS_ALLOWED
    extra = keys - rule.record_keys
    if extra:
        raise ProtocolError(xpath, f"FLOP/{rule.styp} may not carry {sorted(extra)}")
    if not keys and not rule.deletes:
        raise ProtocolError(xpath, f"FLOP/{rule.styp} carries none of its elements")


def _apply_block(draft: Draft, rule: FlopRule, record: FlightRecord, config: CoreConfig) -> None:
    if rule.deletes:
        delete_flid(draft, record.flid)
        return
    stored = draft.get(record.flid)
    if stored is not None and stored.is_deleted:
        draft.note(f"FLID {record.flid} is DELETED: FLOP/{rule.styp} not applied")
        return
    draft.put(overlay(draft, stored or new_state(record.flid), record, FLOP, config))


def handle_flop(
    current: Mapping[str, FlightState],
    message: FlopMessage,
    config: CoreConfig,
    ctx: DecisionContext,
) -> Decision:
    """Check every block (R4), then apply them in order."""
    styp = message.envelope.styp
    rule = FLOP_RULES.get(styp)
    if rule is None:
        raise ProtocolError("/MSG/META/STYP", f"unknown FLOP subtype {styp!r}")
    for index, block in enumerate(message.blocks, 1):
        check_flid(block, index, "FLOP")
        _check_block(rule, block, index)
    draft = Draft(current, ctx.message_id, keeps_newer=not ctx.requeued)
    for block in message.blocks:
        _apply_block(draft, rule, block, config)
    return finish(draft, message.envelope, config, ctx)

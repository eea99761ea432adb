"""The pure decision: ``decide(current, message, config, ctx) -> Decision``.

One module per family: ``schedule`` (DNLD/RESP packages), ``set_only`` (ADFT/ADD/UPD),
``deletion`` (SCHD DEL, FLOP/FDEL, codeshare cascade in ``codeshare``), ``flop`` and
``ignored``. A ProtocolError raised by any rule becomes ``Decision(DEAD, reason)`` with
no states and no events. ``needed_flids`` tells the service which flights it must load.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from attrs import frozen

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import Decision, DecisionContext, Outcome
from flightstate_core.domain.errors import ProtocolError
from flightstate_core.domain.handlers.deletion import handle_schedule_delete
from flightstate_core.domain.handlers.flop import handle_flop
from flightstate_core.domain.handlers.ignored import handle_ignored
from flightstate_core.domain.handlers.schedule import handle_package
from flightstate_core.domain.handlers.set_only import handle_set_only
from flightstate_core.domain.messages import FlightRecord, FlopMessage, Message, ScheduleMessage
from flightstate_core.domain.rules import SCHEDULE_FAMILIES
from flightstate_core.domain.state import FlightState
from flightstate_core.domain.values import Set

__all__ = ["NamedFlids", "decide", "message_flids", "named_flids", "needed_flids"]

ScheduleHandler = Callable[
    [Mapping[str, FlightState], ScheduleMessage, CoreConfig, DecisionContext], Decision
]
_SCHEDULE_HANDLERS: dict[str, ScheduleHandler] = {
    "package": handle_package,
    "set_only": handle_set_only,
    "delete": handle_schedule_delete,
}


def _records(message: Message) -> tuple[FlightRecord, ...]:
    if isinstance(message, ScheduleMessage):
        return message.records
    if isinstance(message, FlopMessage):
        return message.blocks
    return ()


def _decide(
    current: Mapping[str, FlightState], message: Message, config: CoreConfig, ctx: DecisionContext
) -> Decision:
    if isinstance(message, FlopMessage):
        return handle_flop(current, message, config, ctx)
    if isinstance(message, ScheduleMessage):
        family = SCHEDULE_FAMILIES.get(message.envelope.styp)
        if family is None:
            styp = message.envelope.styp
            raise ProtocolError("/MSG/META/STYP", f"unknown SCHD subtype {styp!r}")
        return _SCHEDULE_HANDLERS[family](current, message, config, ctx)
    return handle_ignored(message)


def decide(
    current: Mapping[str, FlightState], message: Message, config: CoreConfig, ctx: DecisionContext
) -> Decision:
    """Next states and events for one message (pure, deterministic).

    ``current`` must hold every loaded flight ``needed_flids`` named (absent = unknown).
    """
    try:
        return _decide(current, message, config, ctx)
    except ProtocolError as exc:
        return Decision(outcome=Outcome.DEAD, reason=str(exc))


def message_flids(message: Message) -> list[str]:
    """The FLIDs a message names, in order, without repeats."""
    return list(dict.fromkeys(record.flid for record in _records(message)))


@frozen
class NamedFlids:
    """What a message names, computed once per message: its FLIDs (in order, without
    repeats) and those plus the masters its records' MAIDs name."""

    own: tuple[str, ...]
    with_masters: frozenset[str]


def named_flids(message: Message) -> NamedFlids:
    """The FLIDs *message* names by itself (see ``NamedFlids``)."""
    own = tuple(message_flids(message))
    wanted = set(own)
    for record in _records(message):
        maid = record.scalars.get("MAID")
        if isinstance(maid, Set) and maid.raw:
            wanted.add(maid.raw)
    return NamedFlids(own, frozenset(wanted))


def _linked(states: Iterable[FlightState | None]) -> set[str]:
    found: set[str] = set()
    for state in states:
        if state is None:
            continue
        maid = state.scalars.get("MAID")
        if maid:
            found.add(maid)
        for item in state.documents.get("MAFL", ()):
            flid = item.get("FLID")
            if isinstance(flid, str) and flid:
                found.add(flid)
    return found


def needed_flids(
    message: Message, current: Mapping[str, FlightState], named: NamedFlids | None = None
) -> set[str]:
    """FLIDs the service must still load: the message's FLIDs, masters named by MAID in the
    message or in their states, codeshares listed in their MAFL; minus those in ``current``.

    The caller loads them, adds them to ``current`` and subtracts FLIDs it already asked
    for (missing flights never appear in ``current``). One hop: that is all ``decide`` reads.
    ``named``: ``named_flids(message)``, when the caller asks for one message repeatedly.
    """
    if named is None:
        named = named_flids(message)
    wanted = named.with_masters | _linked(current.get(flid) for flid in named.own)
    return {flid for flid in wanted if flid not in current}

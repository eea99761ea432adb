"""Real ``schd``/``msg`` outbox rows of a few flights, one of them huge (the pump's own).

The rows are what the pump writes for SIS messages (``MemoryStore``: the real codec and
wire format), in commit order, grouped by message, as ``insert_rows`` takes them.
"""

from __future__ import annotations

from typing import Any

from flightstate_core.memory import MemoryInbox, MemoryStore
from flightstate_testing.builders import SisBuilder
from flightstate_testing.pumping import pump_until_idle

Row = tuple[Any, ...]


def pumped_rows(messages: list[str]) -> list[list[Row]]:
    """The MSG_EVENT rows each message writes (one list per message, commit order)."""
    inbox = MemoryInbox()
    for raw in messages:
        inbox.append(raw)
    store = MemoryStore()
    pump_until_idle(store, inbox)
    by_message: dict[int | None, list[Row]] = {}
    for e in store.events():
        text = None if e.payload is None else e.payload.decode()
        kind = "NOTIFY" if e.topic == "msg" else ("SNAPSHOT" if text is not None else "TOMBSTONE")
        by_message.setdefault(e.message_id, []).append(
            (e.topic, e.key, text, e.flid, e.state_version, kind, e.message_id)
        )
    return list(by_message.values())


def gates(sis: SisBuilder, flid: int, count: int) -> str:
    """A FLOP GTDT giving *flid* *count* gate rows."""
    items = [{"GATE": f"G{i % 60}", "PGOT": sis.when(flid, -40), "GTYP": "D"}
             for i in range(count)]  # fmt: skip
    return sis.collection(flid, "GTDT", items)


def flights_with_a_huge_one(flights: int = 26, huge: int = 6, huge_gates: int = 20_000,
                            seed: int = 37) -> list[list[Row]]:  # fmt: skip
    """*flights* flights created one message each; flight *huge* then gets *huge_gates*
    gates (a multi-MB ``schd`` payload) right after its creation, before the flights
    after it: the rows of each message, commit order."""
    sis = SisBuilder(seed=seed)
    messages: list[str] = []
    for flid in range(1, flights + 1):
        messages.append(sis.schedule("ADD", [flid]))
        if flid == huge:
            messages.append(gates(sis, flid, huge_gates))
    return pumped_rows(messages)

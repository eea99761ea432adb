"""The pump: one active leader moves the inbox FIFO into the store, then backfills.

``_pump`` composes the parts, each a module here: ``leadership`` (the lease and its
epoch), ``fifo`` (the head message to its end, with the ``retry_budget``), ``gaps`` and
``gap_keeper`` (inbox ids not yet visible), ``backfill`` (after commit, from durable
intents), ``polling`` (adaptive idle reads), ``control`` (injected time) and ``settings``.

Layer rule: the pump works on ``flightstate_core.ports`` and the engine; it imports no
adapter and no driver.
"""

from flightstate_core.pump._pump import (
    Backoff,
    MessageProcessor,
    Pump,
    PumpSettings,
    PumpStats,
    ServiceProcessor,
)

__all__ = ["Backoff", "MessageProcessor", "Pump", "PumpSettings", "PumpStats", "ServiceProcessor"]

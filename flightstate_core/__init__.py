"""flightstate_core: the pure core of flightstate (no I/O, no database or Kafka driver).

Decode SIS messages, decide the next state of every flight they touch and the events to
publish, and process inbox rows through the ``ports`` a backend implements. Everything
here is deterministic given its inputs (the clock comes in through ``DecisionContext``).
"""

from flightstate_core.domain.codec import decode, encode
from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import Decision, DecisionContext, OutboxEvent, Outcome
from flightstate_core.domain.errors import (
    ConfigError,
    FlightstateError,
    LeadershipLost,
    PermanentError,
    ProtocolError,
    TransientError,
)
from flightstate_core.domain.handlers import decide
from flightstate_core.domain.messages import Message
from flightstate_core.domain.records import InboxRow, ProcessedMessage
from flightstate_core.domain.state import FlightState, FlightStatus
from flightstate_core.domain.wire import wire
from flightstate_core.engine.service import process_batch, process_message, record_dead

__all__ = [
    "ConfigError",
    "CoreConfig",
    "Decision",
    "DecisionContext",
    "FlightState",
    "FlightStatus",
    "FlightstateError",
    "InboxRow",
    "LeadershipLost",
    "Message",
    "OutboxEvent",
    "Outcome",
    "PermanentError",
    "ProcessedMessage",
    "ProtocolError",
    "TransientError",
    "decide",
    "decode",
    "encode",
    "process_batch",
    "process_message",
    "record_dead",
    "wire",
]

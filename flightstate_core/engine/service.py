"""The public names of message processing, in one place (a facade, no logic of its own).

Decoding and the outcome's records live in ``flightstate_core.engine.outcome``; opening and
locking the transaction, deciding in FIFO order and writing in
``flightstate_core.engine.unit_of_work``; its API in ``flightstate_core.engine.processor``
(docs/design.md "One message, one transaction").
"""

from __future__ import annotations

from flightstate_core.engine.outcome import (
    MEDIUMINT_MAX,
    Decoded,
    PreparedRows,
    Undecodable,
    build_processed,
    decode_row,
    prepare_rows,
)
from flightstate_core.engine.processor import process_batch, process_message, record_dead
from flightstate_core.engine.unit_of_work import AfterSave

__all__ = [
    "MEDIUMINT_MAX",
    "AfterSave",
    "Decoded",
    "PreparedRows",
    "Undecodable",
    "build_processed",
    "decode_row",
    "prepare_rows",
    "process_batch",
    "process_message",
    "record_dead",
]

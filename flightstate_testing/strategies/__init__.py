"""Hypothesis strategies for every SIS message kind, shared by all tests.

Every strategy generates messages that ``decode`` can produce, so
``decode(encode(m)) == m`` holds for all of them; ``Set.typed`` is filled as the decoder
would fill it under the default ``CoreConfig`` (Asia/Shanghai, century pivot 70).

Building blocks (``time_raws``, ``scalar_ops``, ``exception_parts``, ``collection_values``,
``document_values``, ``stand_updates``) are public so merge and pump tests can compose
their own histories; message strategies take an optional FLID strategy so that histories
hit the same few flights.
"""

from __future__ import annotations

from hypothesis import strategies as st

from flightstate_core.domain.messages import Message
from flightstate_testing.strategies.flights import (
    flop_blocks,
    flop_messages,
    schedule_messages,
    schedule_records,
)
from flightstate_testing.strategies.others import (
    reference_data_messages,
    reference_requests,
    schedule_requests,
    schedule_season_messages,
)
from flightstate_testing.strategies.values import (
    FLID_POOL,
    collection_values,
    document_values,
    envelopes,
    exception_parts,
    flids,
    raw_values,
    scalar_ops,
    stand_updates,
    time_raws,
)

__all__ = [
    "FLID_POOL",
    "collection_values",
    "document_values",
    "envelopes",
    "exception_parts",
    "flids",
    "flop_blocks",
    "flop_messages",
    "messages",
    "raw_values",
    "reference_data_messages",
    "reference_requests",
    "scalar_ops",
    "schedule_messages",
    "schedule_records",
    "schedule_requests",
    "schedule_season_messages",
    "stand_updates",
    "time_raws",
]


def messages() -> st.SearchStrategy[Message]:
    """Any message kind."""
    return st.one_of(
        flop_messages(),
        schedule_messages(),
        schedule_season_messages(),
        reference_data_messages(),
        schedule_requests(),
        reference_requests(),
    )

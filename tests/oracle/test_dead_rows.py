"""A DEAD record is writable on PostgreSQL and Oracle alike, whatever the message holds
(docs/design.md, "Poison-proof bounds"; pure: the two PROC_STATE row builders over the same
table of inputs).

PostgreSQL's builder takes any text; what PostgreSQL itself refuses is modelled in
``pg_refusal`` (the PROC_STATE_IDENTITY_IX row limit, bigint, timestamptz range). The Oracle
builder checks every VARCHAR2 byte limit. For every case both must accept the DEAD record.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flightstate_core.domain.catalog import COLLECTIONS
from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import Decision, Outcome
from flightstate_core.domain.errors import ProtocolError
from flightstate_core.domain.layout import DETAIL_TABLES
from flightstate_core.domain.limits import (
    ENVELOPE_TEXT_MAX_BYTES,
    FLID_MAX_BYTES,
    IDENTITY_KEY_MAX_BYTES,
    INDEXED_CHILDREN,
    INDEXED_SCALARS,
    utf8_len,
)
from flightstate_core.domain.messages import Envelope
from flightstate_core.domain.records import InboxRow, ProcessedMessage
from flightstate_core.engine.service import Undecodable, build_processed, decode_row
from flightstate_oracle._records import proc_row
from flightstate_oracle._schema import TABLES
from flightstate_pg._writes import _proc_row as pg_proc_row
from tests.codec.oversize import AT_LIMIT_CASES, OVERSIZE_CASES

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
CONFIG = CoreConfig()
PG_INDEX_ROW_MAX = 2704  # btree version 4
BIGINT_MAX = 2**63 - 1
PG_PROC_COLUMNS = (
    "MESSAGE_ID", "IDENTITY_KEY", "PAYLOAD_DIGEST", "MSG_TYPE", "MSG_STYP", "STATUS", "REASON",
    "ATTEMPTS", "RECEIVED_AT", "PROCESSED_AT", "DTTM", "BACKFILL_STATUS", "BACKFILL_AT",
    "BACKFILL_ATTEMPTS", "SUBSYSTEM_NAME", "SUBSYSTEM_TYPE", "SUBSYSTEM_SUBTYPE",
    "SUBSYSTEM_SEQUENCE", "SUBSYSTEM_DATE_SENT",
)  # fmt: skip


def pg_refusal(values: list[Any]) -> str | None:
    """Why PostgreSQL would refuse this PROC_STATE row (None: it accepts it)."""
    row = dict(zip(PG_PROC_COLUMNS, values, strict=True))
    key_bytes = sum(utf8_len(row[c] or "") for c in ("IDENTITY_KEY", "PAYLOAD_DIGEST")) + 8
    if key_bytes > PG_INDEX_ROW_MAX:
        return f"index row of {key_bytes} bytes"
    sequence = row["SUBSYSTEM_SEQUENCE"]
    if sequence is not None and not -BIGINT_MAX - 1 <= sequence <= BIGINT_MAX:
        return "bigint out of range"
    for name in ("DTTM", "SUBSYSTEM_DATE_SENT"):
        stamp = row[name]
        if stamp is not None:
            stamp.replace(tzinfo=stamp.tzinfo or UTC).astimezone(UTC)  # raises when out of range
    return None


def dead_records(raw: str, reason: str = "RuntimeError: boom") -> list[ProcessedMessage]:
    """The two ways a message ends DEAD: its decoding failed (ProtocolError), or the pump
    recorded it DEAD after unexpected errors (``service.record_dead``'s subject)."""
    row = InboxRow(77, raw, received_at=NOW)
    decoded = decode_row(row, CONFIG)
    envelope = decoded.envelope
    forced = Undecodable(ProtocolError("/MSG", reason), envelope)
    dead = Decision(outcome=Outcome.DEAD, reason=str(getattr(decoded, "error", reason)))
    return [
        build_processed(row, subject, dead, now=NOW, attempts=3) for subject in (decoded, forced)
    ]


def _assert_both_accept(processed: ProcessedMessage) -> None:
    pg_row = pg_proc_row(processed)
    assert pg_refusal(pg_row) is None
    proc_row(processed)  # raises ValueTooLong on any VARCHAR2 overflow


CASES = [(name, raw) for name, raw, _ in OVERSIZE_CASES] + list(AT_LIMIT_CASES)


@pytest.mark.parametrize(("name", "raw"), CASES, ids=[c[0] for c in CASES])
def test_both_builders_accept_every_dead_record(name: str, raw: str) -> None:
    for processed in dead_records(raw):
        _assert_both_accept(processed)


_any_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=3000)


@settings(max_examples=200, deadline=None)
@given(sndr=_any_text, seqn=_any_text, type_=_any_text, styp=_any_text, reason=_any_text)
def test_an_envelope_built_elsewhere_still_gives_a_writable_dead_record(
    sndr: str, seqn: str, type_: str, styp: str, reason: str
) -> None:
    envelope = Envelope(sndr, seqn, "20211010090311", type_, styp)
    row = InboxRow(5, "<MSG/>")
    subject = Undecodable(ProtocolError("/MSG", reason), envelope)
    dead = Decision(outcome=Outcome.DEAD, reason=reason)
    _assert_both_accept(build_processed(row, subject, dead, now=NOW, attempts=1))


def test_core_limits_match_the_oracle_columns() -> None:
    proc = TABLES["PROC_STATE"]
    assert proc.column("IDENTITY_KEY").max_bytes == IDENTITY_KEY_MAX_BYTES
    assert proc.column("MSG_TYPE").max_bytes == ENVELOPE_TEXT_MAX_BYTES
    assert proc.column("MSG_STYP").max_bytes == ENVELOPE_TEXT_MAX_BYTES
    assert TABLES["FLIGHT_SCHD"].column("FLID").max_bytes == FLID_MAX_BYTES
    assert TABLES["MSG_EVENT"].column("FLID").max_bytes == FLID_MAX_BYTES
    for code, limit in INDEXED_SCALARS.items():
        assert TABLES["FLIGHT_SCHD"].column(code).max_bytes == limit
    for collection, children in INDEXED_CHILDREN.items():
        table = TABLES[COLLECTIONS[collection].table]
        assert table.name in DETAIL_TABLES
        for code, limit in children.items():
            assert table.column(code).max_bytes == limit

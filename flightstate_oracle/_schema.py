"""The Oracle 11g tables of the shared layout (pure: no driver, no I/O).

Built from ``flightstate_core.domain.layout`` with the column types of ``_columns`` (why
lengths are in BYTE and over-long values are refused: see there). The migrations
(``migrations/*.sql``) must declare exactly these tables; a test parses them and compares.
History twins (``<TABLE>_HIST``, migration 0002) repeat their table's columns, EMPTY_CODES
included (an archived row keeps ``""`` apart from absent too), plus ARCHIVED_AT. ARCHIVED_AT
is a zone-less ``TIMESTAMP(6)`` holding UTC, not TIMESTAMP WITH TIME ZONE, because it is part
of the primary key and Oracle refuses TIMESTAMP WITH TIME ZONE columns in a primary or unique
key (ORA-02329).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from flightstate_core.domain.layout import (
    DETAIL_TABLES,
    DOCUMENT_COLUMNS,
    MAIN_TABLE,
    SCALAR_COLUMNS,
    DetailTable,
    TypedColumn,
)
from flightstate_oracle._columns import (
    CODE_BYTES,
    EMPTY_CODES,
    FREE_TEXT_CODES,
    KEY_BYTES,
    MAX_VARCHAR2_BYTES,
    TEXT_BYTES,
    Bind,
    Column,
    Table,
    ValueTooLong,
    check_fits,
    clob,
    number,
    tstz,
    utf8_len,
    varchar,
)

# The column types are re-exported: callers take the tables and their types from here.
__all__ = [
    "CODE_BYTES",
    "EMPTY_CODES",
    "MAX_VARCHAR2_BYTES",
    "TABLES",
    "TEXT_BYTES",
    "Bind",
    "Column",
    "Table",
    "ValueTooLong",
    "check_fits",
    "history_table",
    "utf8_len",
]


def _raw_bytes(code: str) -> int:
    return TEXT_BYTES if code in FREE_TEXT_CODES else CODE_BYTES


def _value_columns(columns: tuple[TypedColumn, ...]) -> tuple[Column, ...]:
    out: list[Column] = []
    for typed in columns:
        out.append(varchar(typed.code, _raw_bytes(typed.code)))
        if typed.typed is None:
            continue
        if typed.typed.endswith("_TS"):
            out.append(tstz(typed.typed))
        elif typed.typed.endswith("_DT"):
            out.append(Column(typed.typed, "DATE", Bind.DATE))
        else:
            out.append(number(typed.typed, 10))
    return tuple(out)


def _empty_codes_bytes(codes: tuple[str, ...]) -> int:
    """Room for every code separated by one space (rounded up to a multiple of 100)."""
    need = sum(len(code) + 1 for code in codes)
    return min(MAX_VARCHAR2_BYTES, -(-need // 100) * 100)


def _main_table() -> Table:
    scalars = _value_columns(SCALAR_COLUMNS)
    columns = (
        varchar("FLID", KEY_BYTES, nullable=False),
        varchar("STATE", 16, nullable=False),
        number("STATE_VERSION", nullable=False),
        Column("OPERATION_DAY", "DATE", Bind.DATE),
        number("LAST_MESSAGE_ID"),
        tstz("CREATED_AT"),
        tstz("UPDATED_AT"),
        *scalars,
        *(clob(code) for code in DOCUMENT_COLUMNS),
        varchar(EMPTY_CODES, _empty_codes_bytes(tuple(c.code for c in SCALAR_COLUMNS))),
        clob("PROVENANCE"),  # migration 0009: docs/design.md, "Late rows and provenance"
    )
    return Table(MAIN_TABLE, columns, ("FLID",))


def _detail_table(detail: DetailTable) -> Table:
    keys: tuple[Column, ...] = (varchar("FLID", KEY_BYTES, nullable=False),)
    if detail.route_kind:
        keys += (varchar("ROUTE_KIND", 8, nullable=False),)
    codes = ("SOURCE_SEQ", *(child.code for child in detail.children))
    columns = (
        *keys,
        number("ORDINAL", 5, nullable=False),
        varchar("SOURCE_SEQ", CODE_BYTES),
        *_value_columns(detail.children),
        varchar(EMPTY_CODES, _empty_codes_bytes(codes)),
    )
    return Table(detail.name, columns, detail.key_columns)


def _infra_tables() -> tuple[Table, ...]:
    return (
        Table(
            "PIPELINE_LOCK",
            (
                varchar("LOCK_NAME", KEY_BYTES, nullable=False),
                number("EPOCH", nullable=False),
                varchar("HOLDER", CODE_BYTES),
                tstz("LEASE_EXPIRES_AT"),
                tstz("UPDATED_AT"),
            ),
            ("LOCK_NAME",),
        ),
        Table(
            "MSG_EVENT",
            (
                number("EVENT_ID", nullable=False),
                varchar("TOPIC", KEY_BYTES, nullable=False),
                varchar("EVENT_KEY", CODE_BYTES),
                clob("PAYLOAD"),
                varchar("FLID", KEY_BYTES, nullable=False),
                number("STATE_VERSION", nullable=False),
                varchar("KIND", 16, nullable=False),
                number("MESSAGE_ID"),
                tstz("CREATED_AT", nullable=False),
                tstz("DISPATCHED_AT"),
                varchar(EMPTY_CODES, 100),  # EVENT_KEY / PAYLOAD when ""
            ),
            ("EVENT_ID",),
        ),
        _proc_state(),
        Table(
            "INBOX_CURSOR",
            (
                varchar("INBOX_NAME", KEY_BYTES, nullable=False),
                number("LAST_MESSAGE_ID", nullable=False),
                tstz("UPDATED_AT"),
                number("LATE_ROWS", nullable=False),  # migration 0007
                number("GAPS_ABANDONED", nullable=False),  # migration 0007
            ),
            ("INBOX_NAME",),
        ),
        Table(
            "SCHD_SNAP_LOG",
            (
                number("SNAP_ID", nullable=False),
                number("MESSAGE_ID"),
                varchar("STYP", KEY_BYTES),
                number("RECORD_COUNT", 10),
                clob("FLIDS"),
                clob("OPERATION_DAYS"),
                tstz("CREATED_AT", nullable=False),
            ),
            ("SNAP_ID",),
        ),
    )


#: PROC_STATE text columns that may legitimately be "" (kept through EMPTY_CODES).
PROC_TEXT_COLUMNS: Final = (
    "IDENTITY_KEY",
    "PAYLOAD_DIGEST",
    "MSG_TYPE",
    "MSG_STYP",
    "REASON",
    "SUBSYSTEM_NAME",
    "SUBSYSTEM_TYPE",
    "SUBSYSTEM_SUBTYPE",
)


def _proc_state() -> Table:
    return Table(
        "PROC_STATE",
        (
            number("MESSAGE_ID", nullable=False),
            varchar("IDENTITY_KEY", CODE_BYTES),
            varchar("PAYLOAD_DIGEST", CODE_BYTES),
            varchar("MSG_TYPE", KEY_BYTES),
            varchar("MSG_STYP", KEY_BYTES),
            varchar("STATUS", 16, nullable=False),
            clob("REASON"),
            number("ATTEMPTS", 10, nullable=False),
            tstz("RECEIVED_AT"),
            tstz("PROCESSED_AT", nullable=False),
            tstz("DTTM"),
            varchar("BACKFILL_STATUS", 16),
            tstz("BACKFILL_AT"),
            number("BACKFILL_ATTEMPTS", 10, nullable=False),
            varchar("BACKFILL_ERROR", TEXT_BYTES),
            varchar("SUBSYSTEM_NAME", KEY_BYTES),
            varchar("SUBSYSTEM_TYPE", KEY_BYTES),
            varchar("SUBSYSTEM_SUBTYPE", KEY_BYTES),
            number("SUBSYSTEM_SEQUENCE"),
            Column("SUBSYSTEM_DATE_SENT", "TIMESTAMP(6)", Bind.TIMESTAMP),
            varchar(EMPTY_CODES, _empty_codes_bytes(PROC_TEXT_COLUMNS)),
            number("LATE", 1, nullable=False),  # migration 0007: 1 = applied late
        ),
        ("MESSAGE_ID",),
    )


def history_table(table: Table) -> Table:
    """The ``_HIST`` twin of a flight table: same columns, ARCHIVED_AT (UTC) in the key."""
    archived = Column("ARCHIVED_AT", "TIMESTAMP(6)", Bind.TIMESTAMP, None, nullable=False)
    key = (table.primary_key[0], "ARCHIVED_AT", *table.primary_key[1:])
    return Table(f"{table.name}_HIST", (*table.columns, archived), key)


def _request_tables() -> tuple[Table, ...]:
    return (
        Table(
            "SCHD_REQUEST",
            (
                number("REQUEST_ID", nullable=False),
                varchar("SNDR", KEY_BYTES, nullable=False),
                tstz("WINDOW_START", nullable=False),
                tstz("WINDOW_END", nullable=False),
                number("SEQN", 10, nullable=False),
                tstz("SENT_AT", nullable=False),
                number("ATTEMPTS", 10, nullable=False),
                varchar("STATUS", 16, nullable=False),
                number("ANSWERED_BY"),
                tstz("ANSWERED_AT"),
                tstz("FAILED_AT"),
                number("OUTBOUND_ID"),
                tstz("CREATED_AT", nullable=False),
            ),
            ("REQUEST_ID",),
        ),
        Table(
            "SCHD_RESPONSE_LOG",
            (
                number("MESSAGE_ID", nullable=False),
                number("REQUEST_ID"),
                tstz("WINDOW_START"),
                tstz("WINDOW_END"),
                tstz("MATCHED_AT", nullable=False),
            ),
            ("MESSAGE_ID",),
        ),
    )


def _watermark_table() -> Table:
    return Table(
        "OUTBOX_WATERMARK",
        (
            varchar("OUTBOX_NAME", KEY_BYTES, nullable=False),
            number("LAST_EVENT_ID", nullable=False),
            tstz("UPDATED_AT", nullable=False),
        ),
        ("OUTBOX_NAME",),
    )


def _gap_table() -> Table:
    return Table(
        "INBOX_GAP",
        (
            varchar("INBOX_NAME", KEY_BYTES, nullable=False),
            number("LOW_ID", nullable=False),
            number("HIGH_ID", nullable=False),
            tstz("FIRST_SEEN_AT", nullable=False),
        ),
        ("INBOX_NAME", "LOW_ID"),
    )


def _parked_table() -> Table:
    return Table(
        "OUTBOX_PARKED",
        (
            number("EVENT_ID", nullable=False),
            varchar("FLID", KEY_BYTES, nullable=False),
            varchar("TOPIC", KEY_BYTES, nullable=False),
            number("STATE_VERSION", nullable=False),
            number("SIZE_BYTES", nullable=False),
            varchar("REASON", MAX_VARCHAR2_BYTES, nullable=False),
            tstz("PARKED_AT", nullable=False),
            tstz("RESOLVED_AT"),
        ),
        ("EVENT_ID",),
    )


def _runner_tables() -> tuple[Table, ...]:
    """The reference runner's heartbeat and requeue audit (migration 0005)."""
    return (
        Table(
            "RUNNER_HEARTBEAT",
            (
                varchar("HOLDER", CODE_BYTES, nullable=False),
                tstz("UPDATED_AT", nullable=False),
                number("IS_LEADER", 1, nullable=False),
                clob("LAST_ERROR"),
                clob("STATS"),
            ),
            ("HOLDER",),
        ),
        Table(
            "RUNNER_REQUEUE",
            (
                number("REQUEUE_ID", nullable=False),
                number("MESSAGE_ID", nullable=False),
                tstz("REQUEUED_AT", nullable=False),
                varchar("PREVIOUS_STATUS", 16, nullable=False),
                clob("PREVIOUS_REASON"),
                number("PREVIOUS_ATTEMPTS", 10),
                varchar("NEW_STATUS", 16),
            ),
            ("REQUEUE_ID",),
        ),
    )


def _all_tables() -> Mapping[str, Table]:
    flights = [_main_table(), *(_detail_table(d) for d in DETAIL_TABLES.values())]
    tables = [*flights, *_infra_tables()]
    tables += [history_table(table) for table in flights]  # migration 0002
    tables += _request_tables()  # migration 0003
    tables.append(_watermark_table())  # migration 0004
    tables += _runner_tables()  # migration 0005
    tables.append(_gap_table())  # migration 0007
    tables.append(_parked_table())  # migration 0008
    return MappingProxyType({table.name: table for table in tables})


#: Every table of the Oracle schema, in creation order.
TABLES: Final[Mapping[str, Table]] = _all_tables()

"""Oracle 11g column types, byte limits and the over-long check (pure: no driver, no I/O).

Why: Oracle 11g SQL ``VARCHAR2`` holds at most 4000 *bytes*, identifiers at most 30 bytes,
and a zero-length string is NULL. Every column therefore has an explicit type, lengths are
declared in BYTE (never CHAR, never left to NLS_LENGTH_SEMANTICS), and the database character
set must be AL32UTF8 so that a Python ``str``'s UTF-8 length is what Oracle counts
(``OracleStore.check_database`` verifies it).

Decision on over-long values: a text longer than its VARCHAR2 column is **rejected** before any
SQL runs, with ``ValueTooLong`` (a ``PermanentError``) naming ``TABLE.COLUMN`` and the byte
count. It is never truncated and never silently moved to a CLOB: texts that can legitimately
be long are CLOB columns from the start (documents SRVT/VIPF/MAFL, MSG_EVENT payload, PROC_STATE
reason, snap-log lists), free-text SIS values (remarks, exception texts, delay text) get the full
4000 bytes, codes and times get 400 bytes (the longest SIS code is a few characters).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from attrs import frozen

from flightstate_core.domain.errors import PermanentError

__all__ = [
    "CODE_BYTES",
    "EMPTY_CODES",
    "FREE_TEXT_CODES",
    "KEY_BYTES",
    "MAX_VARCHAR2_BYTES",
    "TEXT_BYTES",
    "Bind",
    "Column",
    "Table",
    "ValueTooLong",
    "check_fits",
    "clob",
    "number",
    "tstz",
    "utf8_len",
    "varchar",
]

MAX_VARCHAR2_BYTES: Final = 4000  # Oracle 11g SQL limit (MAX_STRING_SIZE=EXTENDED is 12c)
TEXT_BYTES: Final = 4000  # free-text SIS values
CODE_BYTES: Final = 400  # SIS codes, times, sequence attributes
KEY_BYTES: Final = 64  # FLID, lock/inbox names, topics
EMPTY_CODES: Final = "EMPTY_CODES"  # presence column: codes whose value is ""

#: SIS values that are free text (may carry long Chinese text).
FREE_TEXT_CODES: Final = frozenset(
    {"REMC", "EXSR", "VIPR", "FDIV_TEXT", "FRET_TEXT", "FLAB_TEXT", "DLTX"}
)


class Bind(StrEnum):
    """How a column's value is bound (``setinputsizes``) and read back."""

    TEXT = "TEXT"  # VARCHAR2(n BYTE); "" is stored as NULL + EMPTY_CODES
    CLOB = "CLOB"  # bound as a CLOB so values over 4000 bytes work in MERGE/INSERT
    TSTZ = "TSTZ"  # TIMESTAMP WITH TIME ZONE: bound as UTC TIMESTAMP inside FROM_TZ(.., '+00:00')
    TIMESTAMP = "TIMESTAMP"  # zone-less TIMESTAMP (airport-local naive values)
    DATE = "DATE"
    NUMBER = "NUMBER"


class ValueTooLong(PermanentError):
    """A text does not fit its Oracle column; retrying cannot help."""

    def __init__(self, column: str, size: int, limit: int) -> None:
        super().__init__(
            f"{column}: {size} bytes (UTF-8) exceed VARCHAR2({limit} BYTE) of Oracle 11g; "
            "value rejected, not truncated"
        )
        self.column = column
        self.size = size
        self.limit = limit


@frozen
class Column:
    """One column: name, DDL type, bind kind and (for VARCHAR2) its byte limit."""

    name: str
    type_sql: str
    bind: Bind
    max_bytes: int | None = None
    nullable: bool = True

    @property
    def ddl(self) -> str:
        return f"{self.name} {self.type_sql}" + ("" if self.nullable else " NOT NULL")


@frozen
class Table:
    """One table: columns in DDL order and the primary key."""

    name: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...]

    def column(self, name: str) -> Column:
        for column in self.columns:
            if column.name == name:
                return column
        raise KeyError(f"{self.name}.{name}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(column.name for column in self.columns)


def varchar(name: str, max_bytes: int, *, nullable: bool = True) -> Column:
    """A VARCHAR2 column with its length in BYTE."""
    if not 0 < max_bytes <= MAX_VARCHAR2_BYTES:
        raise ValueError(f"{name}: VARCHAR2 of {max_bytes} bytes is not possible in 11g")
    return Column(name, f"VARCHAR2({max_bytes} BYTE)", Bind.TEXT, max_bytes, nullable)


def number(name: str, digits: int = 19, *, nullable: bool = True) -> Column:
    return Column(name, f"NUMBER({digits})", Bind.NUMBER, None, nullable)


def tstz(name: str, *, nullable: bool = True) -> Column:
    return Column(name, "TIMESTAMP(6) WITH TIME ZONE", Bind.TSTZ, None, nullable)


def clob(name: str) -> Column:
    return Column(name, "CLOB", Bind.CLOB)


def utf8_len(text: str) -> int:
    """Bytes Oracle (AL32UTF8) needs for ``text``."""
    return len(text.encode("utf-8", "surrogatepass"))


def check_fits(table: str, column: Column, value: object) -> None:
    """Raise ``ValueTooLong`` if a text does not fit ``column``; anything else passes."""
    if column.max_bytes is None or not isinstance(value, str):
        return
    if len(value) * 4 <= column.max_bytes:  # fast path: cannot exceed even at 4 bytes/char
        return
    size = utf8_len(value)
    if size > column.max_bytes:
        raise ValueTooLong(f"{table}.{column.name}", size, column.max_bytes)

"""Presence encoding: keep ``""`` apart from NULL/absent in Oracle (pure functions).

Why: Oracle stores a zero-length VARCHAR2 or CLOB as NULL, so ``""`` and "absent" would
collapse. Each row that can hold a present-but-empty text has an ``EMPTY_CODES`` column: the
codes (SIS child codes, ``SOURCE_SEQ``, scalar codes, PROC_STATE text columns) whose value is
``""``, separated by one space, or NULL when there are none. The value column itself is NULL.

Rules (``encode_texts`` / ``decode_text``):

1. ``None`` (absent) -> column NULL, code not listed.
2. ``""`` (present, empty; e.g. ``<GATE></GATE>`` in an item, ``GTNO=""``) -> column NULL,
   code listed.
3. any other text, including whitespace-only ``" "`` which Oracle keeps -> stored as is.
4. Reading: NULL and listed -> ``""``; NULL and not listed -> ``None``; a listed code whose
   column is not NULL is corruption (``ValueError``).

Timestamps: TIMESTAMP WITH TIME ZONE columns are written from UTC (``to_utc_naive``, bound as
a TIMESTAMP inside ``FROM_TZ(:x, '+00:00')``) and read through ``SYS_EXTRACT_UTC`` back into
aware UTC datetimes (``from_utc_naive``), so neither the session nor the database time zone
can shift them. A naive datetime given for such a column is taken as UTC.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime

__all__ = [
    "decode_text",
    "encode_texts",
    "from_utc_naive",
    "parse_empty_codes",
    "to_utc_naive",
]


def encode_texts(values: Mapping[str, str | None]) -> tuple[dict[str, str | None], str | None]:
    """Column values (``""`` -> None) and the EMPTY_CODES text for ``values``."""
    columns: dict[str, str | None] = {}
    empty: list[str] = []
    for code, value in values.items():
        if value == "":
            _check_code(code)
            empty.append(code)
            columns[code] = None
        else:
            columns[code] = value
    return columns, (" ".join(empty) if empty else None)


def parse_empty_codes(text: str | None) -> frozenset[str]:
    """The set of codes listed in an EMPTY_CODES value."""
    return frozenset(text.split()) if text else frozenset()


def decode_text(code: str, value: str | None, empties: frozenset[str]) -> str | None:
    """The original value of ``code`` from its column and the row's EMPTY_CODES."""
    if code in empties:
        if value is not None:
            raise ValueError(f"{code} is listed in EMPTY_CODES but holds {value!r}")
        return ""
    return value


def present_texts(
    codes: Iterable[str], row: Mapping[str, object], empties: frozenset[str]
) -> dict[str, str]:
    """The codes of ``row`` that have a value (``""`` included), in ``codes`` order."""
    out: dict[str, str] = {}
    for code in codes:
        value = decode_text(code, _text(row.get(code)), empties)
        if value is not None:
            out[code] = value
    return out


def to_utc_naive(value: datetime | None) -> datetime | None:
    """An aware datetime as naive UTC (naive input is taken as UTC already)."""
    if value is None or value.tzinfo is None:
        return value
    return value.astimezone(UTC).replace(tzinfo=None)


def from_utc_naive(value: object) -> datetime | None:
    """A naive UTC datetime read from ``SYS_EXTRACT_UTC(..)`` as an aware UTC datetime."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise TypeError(f"expected a datetime, got {type(value).__name__}")
    return value.replace(tzinfo=UTC)


def _text(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"expected text, got {type(value).__name__}")


def _check_code(code: str) -> None:
    if not code or any(ch.isspace() for ch in code):
        raise ValueError(f"code {code!r} cannot be listed in EMPTY_CODES")

"""SIS time formats: ``DDMONYYHHMM`` (airport local time), ``DDMONYY``, ``HHMM`` durations.

Parsing is strict (upper-case English months, exact widths) and cached, because the same
raw strings recur across a schedule package. Errors are ``ValueError`` with a reason; the
codec turns them into ``ProtocolError`` naming the element.
"""

from __future__ import annotations

from datetime import date, datetime
from functools import lru_cache
from zoneinfo import ZoneInfo

from flightstate_core.domain.catalog import ValueKind

_TIME_WIDTH = len("DDMONYYHHMM")
_DATE_WIDTH = len("DDMONYY")
_DURATION_WIDTH = len("HHMM")
_LAST_HOUR = 23
_LAST_MINUTE = 59

__all__ = ["parse_date", "parse_duration", "parse_time", "parse_typed", "two_digit_year"]

_MONTHS = {
    name: index
    for index, name in enumerate(
        ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"), 1
    )
}


def two_digit_year(yy: int, pivot: int) -> int:
    """Map a two-digit year into its century: below ``pivot`` is 20YY, else 19YY."""
    return 2000 + yy if yy < pivot else 1900 + yy


def _digits(text: str, what: str) -> int:
    if not (text.isascii() and text.isdigit()):
        raise ValueError(f"{what} {text!r} is not numeric")
    return int(text)


def _day_month_year(raw: str, pivot: int) -> date:
    day = _digits(raw[0:2], "day")
    month = _MONTHS.get(raw[2:5])
    if month is None:
        raise ValueError(f"month {raw[2:5]!r} is not an upper-case English month")
    year = two_digit_year(_digits(raw[5:7], "year"), pivot)
    try:
        return date(year, month, day)
    except ValueError as exc:
        raise ValueError(f"no such date: {exc}") from None


@lru_cache(maxsize=65536)
def _parse_time_cached(raw: str, zone_key: str, pivot: int) -> datetime:
    if len(raw) != _TIME_WIDTH:
        raise ValueError(f"time {raw!r} is not DDMONYYHHMM")
    day = _day_month_year(raw, pivot)
    hour = _digits(raw[7:9], "hour")
    minute = _digits(raw[9:11], "minute")
    if hour > _LAST_HOUR or minute > _LAST_MINUTE:
        raise ValueError(f"time {raw!r} has no such hour or minute")
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=ZoneInfo(zone_key))


def parse_time(raw: str, zone: ZoneInfo, pivot: int = 70) -> datetime:
    """``23JAN210535`` -> 2021-01-23 05:35 in the airport zone (aware)."""
    return _parse_time_cached(raw, zone.key, pivot)


@lru_cache(maxsize=4096)
def parse_date(raw: str, pivot: int = 70) -> date:
    """``23JAN21`` -> 2021-01-23."""
    if len(raw) != _DATE_WIDTH:
        raise ValueError(f"date {raw!r} is not DDMONYY")
    return _day_month_year(raw, pivot)


@lru_cache(maxsize=4096)
def parse_duration(raw: str) -> int:
    """``0130`` (hours and minutes) -> 90 minutes."""
    if len(raw) != _DURATION_WIDTH:
        raise ValueError(f"duration {raw!r} is not HHMM")
    hours = _digits(raw[:2], "hours")
    minutes = _digits(raw[2:], "minutes")
    if minutes > _LAST_MINUTE:
        raise ValueError(f"duration {raw!r} has more than 59 minutes")
    return hours * 60 + minutes


def parse_typed(
    raw: str, kind: ValueKind, zone: ZoneInfo, pivot: int = 70
) -> datetime | date | int | None:
    """Typed twin of a raw value of this kind (None for TEXT)."""
    if kind is ValueKind.TIME:
        return parse_time(raw, zone, pivot)
    if kind is ValueKind.DATE:
        return parse_date(raw, pivot)
    if kind is ValueKind.DURATION:
        return parse_duration(raw)
    return None

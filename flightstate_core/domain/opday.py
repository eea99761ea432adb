"""OPERATION_DAY from SODT: the airport-local date, shifted by the configured cut-over.

Why a module of its own: the day is an identity-like fact (never changed once set, a
package that would change it is DEAD), so the one derivation must be shared by every
handler and by tests. A local time earlier than ``config.opday_cutover`` belongs to the
previous day (a 04:00 cut-over puts 02:30 on the 24th into the 23rd's operation day).
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.times import parse_time
from flightstate_core.domain.values import Set

__all__ = ["operation_day", "operation_day_of_local"]


def operation_day_of_local(local: datetime, config: CoreConfig) -> date:
    """The operation day of an airport-local time (aware times are converted first)."""
    if local.tzinfo is not None:
        local = local.astimezone(config.airport_tz)
    day = local.date()
    if local.time() < config.opday_cutover:
        day -= timedelta(days=1)
    return day


def operation_day(sodt: Set | str, config: CoreConfig) -> date:
    """OPERATION_DAY of a SODT value; ``ValueError`` when the raw text is not a time."""
    if isinstance(sodt, Set):
        typed = sodt.typed
        if isinstance(typed, datetime):
            return operation_day_of_local(typed, config)
        sodt = sodt.raw
    local = parse_time(sodt, config.airport_tz, config.century_pivot)
    return operation_day_of_local(local, config)

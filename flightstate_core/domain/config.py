"""Configuration the pure core needs (validated on construction)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import time
from types import MappingProxyType
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from attrs import field, frozen

from flightstate_core.domain.catalog import COLLECTIONS, Policy
from flightstate_core.domain.errors import ConfigError

__all__ = ["CoreConfig"]


def _zone(value: str | ZoneInfo) -> ZoneInfo:
    if isinstance(value, ZoneInfo):
        return value
    try:
        return ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(f"airport_tz: unknown time zone {value!r}") from exc


def _policies(value: Mapping[str, Policy | str]) -> Mapping[str, Policy]:
    merged = {code: spec.policy for code, spec in COLLECTIONS.items()}
    for code, policy in value.items():
        if code not in COLLECTIONS:
            raise ConfigError(f"collection_policies: unknown collection {code!r}")
        try:
            merged[code] = Policy(policy)
        except ValueError as exc:
            raise ConfigError(f"collection_policies[{code}]: unknown policy {policy!r}") from exc
    return MappingProxyType(merged)


@frozen
class CoreConfig:
    """Site settings for decoding and deciding.

    - ``airport_tz``: zone of every SIS local time (default Asia/Shanghai).
    - ``opday_cutover``: local time at which an operation day starts; a SODT before it
      belongs to the previous operation day.
    - ``century_pivot``: two-digit years below it are 20YY, others 19YY.
    - ``collection_policies``: per-collection override of the catalog's default policy.
    - ``revive_deleted``: whether ADFT/ADD/UPD may bring a DELETED flight back.
    - ``max_message_bytes``: larger messages are DEAD without being parsed.
    """

    airport_tz: ZoneInfo = field(default=ZoneInfo("Asia/Shanghai"), converter=_zone)
    opday_cutover: time = time(0, 0)
    century_pivot: int = 70
    collection_policies: Mapping[str, Policy] = field(factory=dict, converter=_policies)
    revive_deleted: bool = False
    max_message_bytes: int = 4 * 1024 * 1024

    def __attrs_post_init__(self) -> None:
        if not 0 <= self.century_pivot <= 100:  # noqa: PLR2004 - a two-digit year window
            raise ConfigError("century_pivot must be between 0 and 100")
        if self.max_message_bytes <= 0:
            raise ConfigError("max_message_bytes must be positive")

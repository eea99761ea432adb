"""The rules of the runner's plain-valued settings (``RunnerConfig``'s attrs validators):
each raises ``ConfigError`` naming the setting and the value it refused."""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from flightstate_core.domain.errors import ConfigError

__all__ = [
    "INBOX_KINDS", "bind_address", "bootstrap", "directory", "holder", "inbox_kind",
    "inbox_zone", "level", "port", "table", "transactional_id",
]  # fmt: skip

#: Where messages are read (``RunnerConfig.inbox``).
INBOX_KINDS = ("mysql", "store")
_BROKER = re.compile(r"(?:[A-Za-z]+://)?(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})")


def table(instance: object, attribute: Any, value: str) -> None:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,29}", value):
        raise ConfigError(f"{attribute.name}: {value!r} is not a plain table name")


def inbox_zone(instance: object, attribute: Any, value: str) -> None:
    if value:
        try:
            ZoneInfo(value)
        except (ValueError, ZoneInfoNotFoundError) as exc:
            raise ConfigError(f"{attribute.name}: unknown time zone {value!r}") from exc


def inbox_kind(instance: object, attribute: Any, value: str) -> None:
    if value not in INBOX_KINDS:
        raise ConfigError(f"{attribute.name}: {value!r} is not mysql or store")


def port(instance: object, attribute: Any, value: int | None) -> None:
    if value is not None and not 0 < value < 65536:  # noqa: PLR2004 - TCP port range
        raise ConfigError(f"{attribute.name}: {value!r} is not a TCP port")


def level(instance: object, attribute: Any, value: str) -> None:
    if value.upper() not in {"DEBUG", "INFO", "WARNING", "ERROR"}:
        raise ConfigError(f"{attribute.name}: {value!r} is not DEBUG/INFO/WARNING/ERROR")


def bind_address(instance: object, attribute: Any, value: str) -> None:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        if not re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9.-]{0,252})", value):
            raise ConfigError(f"{attribute.name}: {value!r} is not an address or host") from None


def transactional_id(instance: object, attribute: Any, value: str) -> None:
    if value and not re.fullmatch(r"[A-Za-z0-9._-]{1,200}", value):
        raise ConfigError(f"{attribute.name}: {value!r} is not 1-200 of A-Z a-z 0-9 . _ -")


def holder(instance: object, attribute: Any, value: str) -> None:
    if not value.strip() or not value.isprintable() or len(value) > 200:  # noqa: PLR2004
        raise ConfigError(f"{attribute.name}: {value!r} is not 1-200 printable characters")


def bootstrap(instance: object, attribute: Any, value: str | None) -> None:
    """``host:port[,host:port]`` (a ``PLAINTEXT://`` scheme allowed), as documented."""
    for broker in (value or "").split(",") if value else ():
        match = _BROKER.fullmatch(broker.strip())
        if not match or not 0 < int(match[1]) < 65536:  # noqa: PLR2004 - TCP ports
            raise ConfigError(f"{attribute.name}: {broker!r} is not host:port")


def directory(instance: object, attribute: Any, value: str) -> None:
    if value and not Path(value).is_dir():
        raise ConfigError(f"{attribute.name}: {value!r} is not a directory")

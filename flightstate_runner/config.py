"""Runner configuration: defaults, then an optional TOML file, then the environment.

Validated on start: a bad value raises ``ConfigError`` naming the setting. DSNs may hold
passwords, so anything printed or logged goes through ``redact``.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Mapping
from datetime import time
from pathlib import Path
from typing import Any

from attrs import evolve, field, fields, frozen

from flightstate_core.config import CoreConfig
from flightstate_core.errors import ConfigError
from flightstate_core.gaps import GapSettings

__all__ = ["ENV_PREFIX", "RunnerConfig", "load_config", "redact"]

ENV_PREFIX = "FLIGHTSTATE_"


def _cutover(value: str | time) -> time:
    if isinstance(value, time):
        return value
    match = re.fullmatch(r"(\d{1,2}):(\d{2})", str(value).strip())
    if not match or int(match[1]) > 23 or int(match[2]) > 59:  # noqa: PLR2004 - hours, minutes
        raise ConfigError(f"opday_cutover: {value!r} is not HH:MM")
    return time(int(match[1]), int(match[2]))


def _table(instance: object, attribute: Any, value: str) -> None:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,29}", value):
        raise ConfigError(f"{attribute.name}: {value!r} is not a plain table name")


def _port(instance: object, attribute: Any, value: int | None) -> None:
    if value is not None and not 0 < value < 65536:  # noqa: PLR2004 - TCP port range
        raise ConfigError(f"{attribute.name}: {value!r} is not a TCP port")


def _level(instance: object, attribute: Any, value: str) -> None:
    if value.upper() not in {"DEBUG", "INFO", "WARNING", "ERROR"}:
        raise ConfigError(f"{attribute.name}: {value!r} is not DEBUG/INFO/WARNING/ERROR")


def _not_negative(instance: object, attribute: Any, value: float) -> None:
    if value < 0:
        raise ConfigError(f"{attribute.name}: must not be negative (0 turns it off), got {value!r}")


def _positive(instance: object, attribute: Any, value: float) -> None:
    if value <= 0:
        raise ConfigError(f"{attribute.name}: must be positive, got {value!r}")


def _seconds(maximum: float, *, zero_ok: bool = True) -> Any:
    """A validator: a finite number of seconds in 0..maximum (above 0 unless *zero_ok*)."""

    def check(instance: object, attribute: Any, value: float) -> None:
        low_ok = value >= 0 if zero_ok else value > 0
        if not (math.isfinite(value) and low_ok and value <= maximum):
            low = "0" if zero_ok else "above 0"
            raise ConfigError(f"{attribute.name}: must be a finite number of seconds, {low} to "
                              f"{maximum:g}, got {value!r}")
def _finite_in(low: float, high: float) -> Any:
    """A validator: a finite number in [low, high] (NaN and infinities are refused)."""

    def check(instance: object, attribute: Any, value: float) -> None:
        if not math.isfinite(value) or not low <= value <= high:
            raise ConfigError(
                f"{attribute.name}: must be a finite number in [{low:g}, {high:g}], got {value!r}"
            )

    return check


def _transactional_id(instance: object, attribute: Any, value: str) -> None:
    if value and not re.fullmatch(r"[A-Za-z0-9._-]{1,200}", value):
        raise ConfigError(f"{attribute.name}: {value!r} is not 1-200 of A-Z a-z 0-9 . _ -")


@frozen
class RunnerConfig:
    """Every runner setting. ``pg_dsn=None`` means: start an embedded PostgreSQL;
    ``mysql_dsn=None``: the inbox is a PostgreSQL table in the store database;
    ``kafka_bootstrap=None``: events stay in the outbox."""

    pg_dsn: str | None = None
    mysql_dsn: str | None = None
    kafka_bootstrap: str | None = None
    airport_tz: str = "Asia/Shanghai"
    opday_cutover: time = field(default=time(0, 0), converter=_cutover)
    inbox_table: str = field(default="cminmsgs", validator=_table)
    topic_schd: str = "schd"
    topic_msg: str = "msg"
    batch_size: int = field(default=1000, validator=_positive)
    backoff_initial: float = field(default=0.2, validator=_positive)
    backoff_max: float = field(default=10.0, validator=_positive)
    max_unexpected_attempts: int = field(default=3, validator=_positive)
    lease_ttl: float = field(default=10.0, validator=_positive)
    poll_interval: float = field(default=0.5, validator=_positive)
    dispatch_batch: int = field(default=5000, validator=_positive)
    metrics_port: int | None = field(default=None, validator=_port)
    # housekeeping inside `run` (seconds between runs; 0 turns a task off)
    cleanup_interval: float = field(default=300.0, validator=_not_negative)
    retention_days: float = field(default=3.0, validator=_not_negative)
    quiet_days: float = field(default=2.0, validator=_not_negative)
    null_day_quiet_days: float = field(default=14.0, validator=_not_negative)
    cleanup_batch: int = field(default=500, validator=_positive)
    request_interval: float = field(default=60.0, validator=_not_negative)
    request_timeout: float = field(default=600.0, validator=_positive)
    request_max_attempts: int = field(default=3, validator=_positive)
    purge_interval: float = field(default=600.0, validator=_not_negative)
    outbox_retention_hours: float = field(default=24.0, validator=_not_negative)
    # bounded waits of every PostgreSQL session (flightstate_pg.session; 0 turns one off)
    db_lock_timeout: float = field(default=3.0, validator=_seconds(3600))
    db_idle_in_transaction_timeout: float = field(default=10.0, validator=_seconds(3600))
    db_statement_timeout: float = field(default=20.0, validator=_seconds(3600))
    db_keepalive_idle: float = field(default=10.0, validator=_seconds(3600))
    # MariaDB/MySQL inbox: innodb_lock_wait_timeout of the backfill session (1..3600 s)
    backfill_lock_wait_timeout: int = field(default=5, validator=_seconds(3600, zero_ok=False))
    # `run --until-idle`: seconds idle with failing backfills or an undrained outbox
    idle_wait: float = field(default=60.0, validator=_seconds(86400, zero_ok=False))
    # "" = flightstate-<topic_schd>: one id per deployment (every runner of it shares it)
    kafka_transactional_id: str = field(default="", validator=_transactional_id)
    kafka_outage_log_every: float = field(default=60.0, validator=_seconds(86400, zero_ok=False))
    # gap-aware inbox reading (docs/design.md "Gaps in the inbox ids"), seconds / ids
    gap_grace: float = field(default=1.0, validator=_finite_in(0, 3600))
    gap_horizon: float = field(default=21600.0, validator=_finite_in(1, 30 * 86400))
    gap_reconcile_interval: float = field(default=300.0, validator=_finite_in(0, 86400))
    gap_reconcile_window: int = field(default=100_000, validator=_finite_in(1, 100_000_000))
    log_level: str = field(default="INFO", validator=_level)
    holder: str = field(factory=lambda: f"{os.uname().nodename}:{os.getpid()}")

    def takeover_bound(self) -> float:
        """Seconds after a leader freezes (even inside a transaction) within which a
        standby leads: its lease and its open transaction's locks are gone by then, and
        the standby's next try (after at most one lock wait and one poll) succeeds."""
        held = max(self.lease_ttl, self.db_idle_in_transaction_timeout or math.inf,
                   self.db_statement_timeout or math.inf)  # fmt: skip
        return held + self.db_lock_timeout + self.poll_interval + self.backoff_max

    def __attrs_post_init__(self) -> None:
        if self.gap_horizon < self.gap_grace:
            raise ConfigError(f"gap_horizon: {self.gap_horizon!r} is below gap_grace "
                              f"{self.gap_grace!r}")  # fmt: skip

    def gaps(self) -> GapSettings:
        """The pump's gap settings."""
        return GapSettings(
            grace=self.gap_grace, horizon=self.gap_horizon,
            late_poll=min(1.0, max(self.poll_interval, 0.05)),
            reconcile_every=self.gap_reconcile_interval,
            reconcile_window=self.gap_reconcile_window,
        )  # fmt: skip

    def core(self) -> CoreConfig:
        """The pure core's part of the configuration."""
        return CoreConfig(airport_tz=self.airport_tz, opday_cutover=self.opday_cutover)

    def describe(self) -> dict[str, object]:
        """Settings for status output and logs, with secrets redacted."""
        shown = {f.name: getattr(self, f.name) for f in fields(RunnerConfig)}
        for name in ("pg_dsn", "mysql_dsn", "kafka_bootstrap"):
            shown[name] = redact(shown[name]) if shown[name] else None
        shown["opday_cutover"] = self.opday_cutover.strftime("%H:%M")
        return shown


_PASSWORD_IN_URL = re.compile(r"(?P<head>://[^:/@]+:)[^@]*(?P<tail>@)")
_PASSWORD_PARAM = re.compile(r"(?i)(password\s*=\s*)('[^']*'|\S+)")


def redact(dsn: str | None) -> str | None:
    """Hide a password in a URL or key=value DSN."""
    if dsn is None:
        return None
    hidden = _PASSWORD_IN_URL.sub(r"\g<head>***\g<tail>", dsn)
    return _PASSWORD_PARAM.sub(r"\1***", hidden)


_INT_FIELDS = {
    "batch_size", "max_unexpected_attempts", "dispatch_batch", "metrics_port", "cleanup_batch",
    "request_max_attempts", "backfill_lock_wait_timeout",
    "gap_reconcile_window",
}  # fmt: skip
_FLOAT_FIELDS = {
    "backoff_initial", "backoff_max", "lease_ttl", "poll_interval", "cleanup_interval",
    "retention_days", "quiet_days", "null_day_quiet_days", "request_interval", "request_timeout",
    "purge_interval", "outbox_retention_hours", "db_lock_timeout",
    "db_idle_in_transaction_timeout", "db_statement_timeout", "db_keepalive_idle", "idle_wait",
    "kafka_outage_log_every",
    "gap_grace", "gap_horizon",
    "gap_reconcile_interval",
}  # fmt: skip


def _coerce(name: str, value: object) -> object:
    try:
        if name in _INT_FIELDS:
            return int(str(value))
        if name in _FLOAT_FIELDS:
            return float(str(value))
    except ValueError as exc:
        raise ConfigError(f"{name}: {value!r} is not a number") from exc
    return value


def _known(values: Mapping[str, object], source: str) -> dict[str, object]:
    names = {f.name for f in fields(RunnerConfig)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise ConfigError(f"{source}: unknown setting(s) {', '.join(unknown)}")
    return {name: _coerce(name, value) for name, value in values.items()}


def _from_env(environ: Mapping[str, str]) -> dict[str, object]:
    names = {f.name for f in fields(RunnerConfig)}
    found = {}
    for key, value in environ.items():
        if key.startswith(ENV_PREFIX) and key[len(ENV_PREFIX):].lower() in names and value != "":
            found[key[len(ENV_PREFIX):].lower()] = value
    return _known(found, "environment")


def load_config(
    path: Path | None = None,
    environ: Mapping[str, str] | None = None,
    **overrides: object,
) -> RunnerConfig:
    """Defaults, then the TOML file (table ``[flightstate]`` or top level), then
    ``FLIGHTSTATE_*`` variables, then explicit overrides (CLI options)."""
    config = RunnerConfig()
    layers: list[dict[str, object]] = []
    if path is not None:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"config file {path}: {exc}") from exc
        layers.append(_known(data.get("flightstate", data), f"config file {path}"))
    layers.append(_from_env(os.environ if environ is None else environ))
    layers.append(_known({k: v for k, v in overrides.items() if v is not None}, "options"))
    for layer in layers:
        try:
            config = evolve(config, **layer)  # type: ignore[arg-type]  # values checked by attrs
        except (TypeError, ValueError) as exc:
            raise ConfigError(str(exc)) from exc
    config.core()  # validates the zone
    return config
